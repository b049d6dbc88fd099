/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int		 log_stderr = 1;
static int		 log_journal;	/* stderr is journald's stream */
static int		 log_verbose;
static int		 log_time;	/* stderr lines start with the time */
static const char	*log_procname = "migr";
static log_sink_fn	 log_sink;
static void		*log_sink_arg;

/*
 * Under systemd, $JOURNAL_STREAM names the device and inode of the
 * stream journald reads our stderr from.  When it is ours, each line
 * starts with its priority ("<3>"), as sd-daemon(3) describes, and
 * without our name: journald adds the identifier itself.
 */
int
log_journal_stream(int fd)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(fd, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

void
log_init(int to_stderr, int verbose, int facility)
{
	log_stderr = to_stderr;
	log_verbose = verbose;
	log_journal = to_stderr && log_journal_stream(STDERR_FILENO);
	if (!log_stderr)
		openlog(log_procname, LOG_PID | LOG_NDELAY, facility);
	tzset();
}

void
log_procinit(const char *procname)
{
	if (procname != NULL)
		log_procname = procname;
}

void
log_timestamps(int on)
{
	log_time = on;
}

/* "HH:MM:SS.mmm ", local time, for a foreground daemon's lines */
static void
log_stamp(FILE *f)
{
	struct timespec ts;
	struct tm tm;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 ||
	    localtime_r(&ts.tv_sec, &tm) == NULL)
		return;
	fprintf(f, "%02d:%02d:%02d.%03ld ", tm.tm_hour, tm.tm_min, tm.tm_sec,
	    ts.tv_nsec / 1000000);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

void
log_set_sink(log_sink_fn fn, void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

void
log_discard(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)msg;
	(void)arg;
}

static void
log_emit(int prio, const char *msg)
{
	int saved_errno = errno;

	if (log_sink != NULL)
		log_sink(prio, msg, log_sink_arg);
	else if (log_journal)
		fprintf(stderr, "<%d>%s\n", prio & LOG_PRIMASK, msg);
	else if (log_stderr) {
		if (log_time)
			log_stamp(stderr);
		fprintf(stderr, "%s: %s\n", log_procname, msg);
	}
	else
		syslog(prio, "%s", msg);
	errno = saved_errno;
}

void
vlog(int prio, const char *fmt, va_list ap)
{
	char msg[2048];
	int saved_errno = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_emit(prio, msg);
	errno = saved_errno;
}

void
log_msg(int prio, const char *msg, void *arg)
{
	(void)arg;
	if (prio == LOG_DEBUG && log_verbose < 1)
		return;
	log_emit(prio, msg);
}

static void
vlog_errno(int prio, const char *fmt, va_list ap)
{
	char msg[2048];
	int saved_errno = errno;

	if (fmt == NULL) {
		errno = saved_errno;
		log_warnx("%s", strerror(saved_errno));
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	errno = saved_errno;
	/* explicit prio so that fatal() is logged as LOG_CRIT */
	if (prio == LOG_CRIT)
		log_warnx("fatal: %s: %s", msg, strerror(saved_errno));
	else
		log_warnx("%s: %s", msg, strerror(saved_errno));
	errno = saved_errno;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("fatal: %s", msg);
	exit(1);
}
