#include "fw_console.h"

#include <string.h>

#include "fw_config.h"
#include "fw_out.h"

enum line_fault { LINE_OK, LINE_TOO_LONG, LINE_BAD_CHAR };

static struct {
    const struct fw_cmd *cmds;
    size_t count;
    char line[FW_CONSOLE_LINE_MAX + 1];
    size_t len;
    enum line_fault fault;
    unsigned char bad_char;
    bool last_was_cr;
    bool stop; /* the running command took the input: the feed ends after its line */
} con;

static const struct fw_console_style *style;
static bool prompt_held;

void fw_console_hold_prompt(void)
{
    prompt_held = true;
}

void fw_console_set_style(const struct fw_console_style *s)
{
    style = s;
}

void fw_console_prompt(void)
{
    if (style != NULL && style->prompt != NULL) {
        fw_printf("%s", style->prompt);
    }
}

void fw_console_init(const struct fw_cmd *cmds, size_t count)
{
    memset(&con, 0, sizeof con);
    con.cmds = cmds;
    con.count = count;
}

const struct fw_cmd *fw_console_commands(size_t *count)
{
    *count = con.count;
    return con.cmds;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

int fw_console_tokenize(char *line, char **argv, int max_args)
{
    int argc = 0;
    char *p = line;
    for (;;) {
        while (is_space(*p)) {
            *p++ = '\0';
        }
        if (*p == '\0') {
            return argc;
        }
        if (argc == max_args) {
            return -1;
        }
        argv[argc++] = p;
        while (*p != '\0' && !is_space(*p)) {
            p++;
        }
    }
}

/* The first token of the line, for ERR lines about lines that could not be parsed. */
static const char *first_token(char *buf, size_t size)
{
    size_t i = 0;
    const char *p = con.line;
    while (is_space(*p)) {
        p++;
    }
    while (*p != '\0' && !is_space(*p) && i + 1 < size) {
        buf[i++] = *p++;
    }
    buf[i] = '\0';
    return i ? buf : "-";
}

static void dispatch(void)
{
    char name[33];
    con.line[con.len] = '\0';
    if (con.fault == LINE_TOO_LONG) {
        fw_err(first_token(name, sizeof name), "line too long (max %u bytes)", (unsigned)FW_CONSOLE_LINE_MAX);
        return;
    }
    if (con.fault == LINE_BAD_CHAR) {
        fw_err(first_token(name, sizeof name), "invalid character 0x%02x", con.bad_char);
        return;
    }
    if (style != NULL && style->echo) {
        fw_printf("%s\r\n", con.line);
    }
    char *argv[FW_CONSOLE_MAX_ARGS];
    int argc = fw_console_tokenize(con.line, argv, FW_CONSOLE_MAX_ARGS);
    if (argc == 0) {
        return;
    }
    if (argc < 0) {
        fw_err(argv[0], "too many arguments (max %u)", (unsigned)FW_CONSOLE_MAX_ARGS - 1u);
        return;
    }
    for (size_t i = 0; i < con.count; i++) {
        if (strcmp(con.cmds[i].name, argv[0]) == 0) {
            con.cmds[i].fn(argc, argv);
            return;
        }
    }
    if (style != NULL && style->unknown != NULL) {
        style->unknown(argv[0]);
        return;
    }
    fw_err(argv[0], "unknown command (try help)");
}

static void end_line(void)
{
    dispatch();
    con.len = 0;
    con.fault = LINE_OK;
    if (!prompt_held) {
        fw_console_prompt();
    }
    prompt_held = false;
}

bool fw_console_stop_after_line(void)
{
    con.stop = true;
    return con.last_was_cr;
}

size_t fw_console_feed(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        bool was_cr = con.last_was_cr;
        con.last_was_cr = (c == '\r');
        if (c == '\n' && was_cr) {
            continue; /* CR LF is one terminator */
        }
        if (c == '\r' || c == '\n') {
            end_line();
            if (con.stop) { /* the bytes after this line are the command's, not lines */
                con.stop = false;
                con.last_was_cr = false;
                return i + 1;
            }
        } else if (c == '\b' || c == 0x7f) {
            if (con.len > 0 && con.fault == LINE_OK) {
                con.len--;
            }
        } else if ((c < 0x20 && c != '\t') || c > 0x7e) {
            if (con.fault == LINE_OK) {
                con.fault = LINE_BAD_CHAR;
                con.bad_char = c;
            }
        } else if (con.len < FW_CONSOLE_LINE_MAX) {
            con.line[con.len++] = (char)c;
        } else {
            con.fault = LINE_TOO_LONG;
        }
    }
    return len;
}
