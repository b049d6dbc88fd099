/* SPDX-License-Identifier: ISC */
/*
 * Logging shared by migrd, migctl and the tests, after OpenBSD's log.c:
 * stderr until the daemon detaches, syslog after; errno preserved by
 * every call; log_warn appends strerror(errno).
 */
#ifndef MIGR_LOG_H
#define MIGR_LOG_H

#include <stdarg.h>

/* LOG_TO_STDERR: foreground; else syslog (the journal under systemd). */
#define LOG_TO_STDERR	1
#define LOG_TO_SYSLOG	0

/* With to_stderr, a stderr that journald reads ($JOURNAL_STREAM) gets
 * "<prio>" prefixes and no program name. */
void	log_init(int to_stderr, int verbose, int facility);
int	log_journal_stream(int fd);	/* 1 if fd is $JOURNAL_STREAM */
void	log_procinit(const char *procname);
/* Lines to stderr (not journald's) start with "HH:MM:SS.mmm ". */
void	log_timestamps(int on);
void	log_setverbose(int verbose);
int	log_getverbose(void);

/* Optional sink that replaces stderr/syslog (tests, libraries). */
typedef void (*log_sink_fn)(int prio, const char *msg, void *arg);
void	log_set_sink(log_sink_fn fn, void *arg);
/* A sink that drops every message (fuzz targets, tests of refusals). */
void	log_discard(int prio, const char *msg, void *arg);
/* One finished message at prio (a log_sink_fn, e.g. for sk_set_log()). */
void	log_msg(int prio, const char *msg, void *arg);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int, const char *, va_list) __attribute__((format(printf, 2, 0)));
__attribute__((noreturn)) void fatal(const char *, ...)
    __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void fatalx(const char *, ...)
    __attribute__((format(printf, 1, 2)));

#endif
