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

/**
 * How a stock firmware's shell behaves (a console personality, test equipment): the prompt it
 * prints after each command, whether it echoes the line, and what it says of an unknown command.
 */
struct fw_console_style {
    const char *prompt;                /* printed at start and after each line (no line end); NULL: none */
    bool echo;                         /* the line is printed back (with "\r\n") before it runs */
    void (*unknown)(const char *name); /* an unknown command; NULL: "ERR <cmd> unknown command" */
};

/** Installs the command table (kept by pointer) and resets the line state. */
void fw_console_init(const struct fw_cmd *cmds, size_t count);

/** Sets the console's style (kept by pointer; NULL: the project's protocol, no prompt, no echo). */
void fw_console_set_style(const struct fw_console_style *style);

/** Prints the style's prompt, if any (after a command whose output ends later, e.g. at boot). */
void fw_console_prompt(void);

/** The running command blocks the shell (a synchronous zperf upload): its prompt comes later,
 * printed with fw_console_prompt when it ends. */
void fw_console_hold_prompt(void);

/**
 * Feeds received bytes; complete lines are dispatched before this returns. Returns how many bytes
 * it took: all of them, unless a command took the console's input for itself while it ran
 * (fw_console_stop_after_line): then those up to and including the end of that command's line.
 */
size_t fw_console_feed(const char *data, size_t len);

/**
 * Called by a running command that takes the console's input for itself (a transfer): the feed
 * stops after the command's line, so the bytes after it are not parsed as lines. Returns true when
 * the line ended with CR (its CR LF's LF may follow: the caller drops it as the console would).
 */
bool fw_console_stop_after_line(void);

/** The installed command table (for help). */
const struct fw_cmd *fw_console_commands(size_t *count);

/**
 * Splits line in place into at most max_args tokens. Returns the number of tokens, or -1 when
 * the line holds more than max_args tokens (argv then holds the first max_args).
 */
int fw_console_tokenize(char *line, char **argv, int max_args);

#endif /* FW_CONSOLE_H */
