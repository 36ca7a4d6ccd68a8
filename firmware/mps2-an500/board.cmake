# QEMU's mps2-an500 (Cortex-M7): LAN9118 (programmed I/O), CMSDK UART0 console, FPGAIO 25 MHz clock.
fw_board_image(mps2-an500 ${CMAKE_CURRENT_LIST_DIR} startup.c board.c lan9118.c main.c)
