/* Unit tests: console line assembly, tokenizing, dispatch and the ERR lines. */
#include <string.h>

#include "check.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_platform.h"

static char output[8192];
static size_t output_len;
static int calls;
static int last_argc;
static char last_args[FW_CONSOLE_MAX_ARGS][FW_CONSOLE_LINE_MAX + 1];

void fw_platform_console_write(const char *data, size_t len)
{
    if (output_len + len < sizeof output) {
        memcpy(output + output_len, data, len);
        output_len += len;
        output[output_len] = '\0';
    }
}

static void reset(void)
{
    output_len = 0;
    output[0] = '\0';
    calls = 0;
    last_argc = 0;
}

static void cmd_echo(int argc, char **argv)
{
    calls++;
    last_argc = argc;
    for (int i = 0; i < argc; i++) {
        strcpy(last_args[i], argv[i]);
    }
}

static const struct fw_cmd cmds[] = {{"echo", "", "", cmd_echo}, {"e", "", "", cmd_echo}};

static void feed(const char *s)
{
    fw_console_feed(s, strlen(s));
}

int main(void)
{
    fw_console_init(cmds, 2);

    reset();
    feed("echo a  b\tc\r\n");
    CHECK(calls == 1 && last_argc == 4 && strcmp(last_args[3], "c") == 0 && output_len == 0);

    reset();
    feed("echo x\recho y\necho z\r\n"); /* CR, LF and CR LF each end one line */
    CHECK(calls == 3 && strcmp(last_args[1], "z") == 0);

    reset();
    feed("\r\n\n   \r\n"); /* empty lines are ignored */
    CHECK(calls == 0 && output_len == 0);

    reset();
    feed("ech"); /* partial lines wait for their terminator */
    CHECK(calls == 0);
    feed("o 1\n");
    CHECK(calls == 1 && strcmp(last_args[1], "1") == 0);

    reset();
    feed("echoX\b 2\x7f" "3\n"); /* backspace and DEL edit */
    CHECK(calls == 1 && strcmp(last_args[0], "echo") == 0 && strcmp(last_args[1], "3") == 0);

    reset();
    feed("nope 1 2\n");
    CHECK(calls == 0 && strcmp(output, "ERR nope unknown command (try help)\r\n") == 0);

    reset();
    feed("echo \x01 x\n");
    CHECK(calls == 0 && strcmp(output, "ERR echo invalid character 0x01\r\n") == 0);

    reset();
    feed("echo caf\xc3\xa9\n");
    CHECK(calls == 0 && strstr(output, "ERR echo invalid character 0xc3") == output);

    reset();
    char longline[FW_CONSOLE_LINE_MAX + 50];
    memset(longline, 'a', sizeof longline - 1);
    memcpy(longline, "echo ", 5);
    longline[sizeof longline - 1] = '\0';
    feed(longline);
    feed("\n");
    CHECK(calls == 0 && strstr(output, "ERR echo line too long") == output);
    reset();
    feed("echo after\n"); /* the console recovers after an overlong line */
    CHECK(calls == 1 && strcmp(last_args[1], "after") == 0);

    reset();
    char many[FW_CONSOLE_LINE_MAX];
    strcpy(many, "e");
    for (int i = 0; i < FW_CONSOLE_MAX_ARGS; i++) {
        strcat(many, " x");
    }
    strcat(many, "\n");
    feed(many);
    CHECK(calls == 0 && strstr(output, "ERR e too many arguments") == output);

    reset();
    char exact[FW_CONSOLE_LINE_MAX + 2];
    memset(exact, 'b', FW_CONSOLE_LINE_MAX);
    memcpy(exact, "echo ", 5);
    exact[FW_CONSOLE_LINE_MAX] = '\n';
    exact[FW_CONSOLE_LINE_MAX + 1] = '\0';
    feed(exact); /* exactly the maximum length is accepted */
    CHECK(calls == 1 && strlen(last_args[1]) == FW_CONSOLE_LINE_MAX - 5);

    char tok[] = "  a b  ";
    char *argv[4];
    CHECK(fw_console_tokenize(tok, argv, 4) == 2);
    char tok2[] = "a b c";
    CHECK(fw_console_tokenize(tok2, argv, 2) == -1);
    return check_summary("test_console");
}
