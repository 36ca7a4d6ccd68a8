/*
 * fw_console.h - line console over a byte stream (UART or pty).
 *
 * Bytes are assembled into lines ended by CR, LF or CR LF; backspace/DEL edit the line. A line
 * is split into whitespace-separated tokens and dispatched to the command of that name. Every
 * rejected line gets exactly one "ERR <cmd> <reason>" line: unknown command, too many
 * arguments, a line longer than FW_CONSOLE_LINE_MAX, or a byte that is neither printable ASCII
 * nor TAB. Empty lines are ignored.
 */
#ifndef FW_CONSOLE_H
#define FW_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*fw_cmd_fn)(int argc, char **argv);

struct fw_cmd {
    const char *name;
    const char *usage; /* arguments, shown by help */
    const char *help;  /* one line */
    fw_cmd_fn fn;
};

/** Installs the command table (kept by pointer) and resets the line state. */
void fw_console_init(const struct fw_cmd *cmds, size_t count);

/** Feeds received bytes; complete lines are dispatched before this returns. */
void fw_console_feed(const char *data, size_t len);

/** The installed command table (for help). */
const struct fw_cmd *fw_console_commands(size_t *count);

/**
 * Splits line in place into at most max_args tokens. Returns the number of tokens, or -1 when
 * the line holds more than max_args tokens (argv then holds the first max_args).
 */
int fw_console_tokenize(char *line, char **argv, int max_args);

#endif /* FW_CONSOLE_H */
