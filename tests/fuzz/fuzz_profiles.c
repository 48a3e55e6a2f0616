/* libFuzzer harness: the DLSYNC_PROFILES row parser (shim/hooks/profiles.c). Each input line is
 * parsed as the shim reads the file. Properties: no crash; a row that parses has a non-empty
 * symbol and framework that fit their fields, a register index 0..5, and a reason is given
 * exactly when it fails. */
#include "hooks/profiles.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void one_line(const char *line)
{
    dls_profile row;
    char err[160];
    int rc = dls_profile_parse_line(line, &row, err, sizeof err);
    if (rc < 0 && err[0] == '\0')
        abort();
    if (rc > 0 && (!row.symbol[0] || !row.framework[0] || row.index < 0 || row.index > DLS_PROFILE_MAX_ARG ||
                   strlen(row.symbol) >= sizeof row.symbol || strlen(row.framework) >= sizeof row.framework))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    char *text = malloc(n + 1);
    if (!text)
        return 0;
    memcpy(text, data, n);
    text[n] = '\0';
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        one_line(line);
    }
    free(text);
    return 0;
}
