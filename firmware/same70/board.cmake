# SAME70 Xplained (ATSAME70Q21B, Cortex-M7 at 300 MHz): GMAC + KSZ8081RNA (RMII), EDBG USART1 console.
fw_board_image(same70-xplained ${CMAKE_CURRENT_LIST_DIR} startup.c board.c chipid.c gmac.c ksz8081.c main.c)
