/* A program for the tests of what `dlsync run` checked (test_tool_gate.c): the side_stream
 * scenario's exchange, racy or correct, after doing what makes a process hard to check. The last
 * argument is `racy` or `correct`:
 *   gate_app racy|correct                the exchange only
 *   gate_app closefds racy|correct       closes every descriptor from 3 up first (dlsync's log too)
 *   gate_app chdir DIR racy|correct      changes its directory to DIR first
 *   gate_app fork racy|correct           first forks a child that ends with _exit(0) at once
 *   gate_app daemon racy|correct         first forks a child that outlives the program by 3 s
 *   gate_app repeat N racy|correct       N correct exchanges before the last one
 * and, with no exchange, starting PROGRAM (with no arguments) through one of the C library's calls:
 *   gate_app start execv|execvp|execvpe|execl|execlp|execle|posix_spawn|posix_spawnp PROGRAM
 * (the spawns wait for it; each prints "started" first). */
#include "scen.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Starts program the way `how` names; returns the exit status to end with. */
static int start(const char *how, const char *program)
{
    char *argv[] = {(char *)program, NULL};
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    printf("started\n");
    fflush(stdout);
    if (strcmp(how, "execv") == 0)
        execv(program, argv);
    else if (strcmp(how, "execvp") == 0)
        execvp(base, argv);
    else if (strcmp(how, "execvpe") == 0)
        execvpe(base, argv, environ);
    else if (strcmp(how, "execl") == 0)
        execl(program, program, (char *)NULL);
    else if (strcmp(how, "execlp") == 0)
        execlp(base, base, (char *)NULL);
    else if (strcmp(how, "execle") == 0)
        execle(program, program, (char *)NULL, environ);
    pid_t pid;
    int st = 0;
    int rc = strcmp(how, "posix_spawn") == 0    ? posix_spawn(&pid, program, NULL, NULL, argv, environ)
             : strcmp(how, "posix_spawnp") == 0 ? posix_spawnp(&pid, base, NULL, NULL, argv, environ)
                                                : -1;
    return rc == 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

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
    if (argc == 4 && strcmp(argv[1], "start") == 0)
        return start(argv[2], argv[3]);
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
