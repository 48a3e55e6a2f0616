/* A program for the tests of what `dlsync run` checked (test_tool_gate.c): the side_stream
 * scenario's exchange, racy or correct, after doing what makes a process hard to check. The last
 * argument is `racy` or `correct`:
 *   gate_app racy|correct                the exchange only
 *   gate_app closefds racy|correct       closes every descriptor from 3 up first (dlsync's log too)
 *   gate_app chdir DIR racy|correct      changes its directory to DIR first
 *   gate_app fork racy|correct           first forks a child that ends with _exit(0) at once
 *   gate_app daemon racy|correct         first forks a child that outlives the program by 3 s
 *   gate_app repeat N racy|correct       N correct exchanges before the last one */
#include "scen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fork_child(int outlive)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (outlive)
            sleep(3);
        _exit(0);
    }
    if (pid > 0 && !outlive)
        waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    const char *last = argc > 1 ? argv[argc - 1] : "";
    int racy = strcmp(last, "racy") == 0;
    if (!racy && strcmp(last, "correct") != 0) {
        fprintf(stderr, "usage: gate_app [closefds|chdir DIR|fork|daemon|repeat N] racy|correct\n");
        return 2;
    }
    const char *what = argc > 2 ? argv[1] : "";
    if (strcmp(what, "closefds") == 0)
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    else if (strcmp(what, "chdir") == 0 && argc > 3 && chdir(argv[2]) != 0)
        return 2;
    else if (strcmp(what, "fork") == 0 || strcmp(what, "daemon") == 0)
        fork_child(strcmp(what, "daemon") == 0);
    else if (strcmp(what, "repeat") == 0 && argc > 3)
        for (int i = atoi(argv[2]); i > 0; i--)
            scen_side_stream(0, 4);
    scen_side_stream(racy, 4);
    return 0;
}
