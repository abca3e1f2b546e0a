/* edgebench's native sampler: the sampling loop of sampler.sh as one small static program.
 *
 * sampler.sh runs it in place of its own loop (`sample_loop`) where edgebench could build it for the device's ABI
 * and push it there (agents/native/build.py, agents/sh/native.py): same files, same clock, same record format, so
 * the workstation reads its records with the same parser and cannot tell the two apart but by the sampler name the
 * trial records.  The difference is the cost: the shell forks nothing per tick but still interprets every line and
 * reads most files a byte per system call; this keeps every file open and re-reads it with one pread(2) at offset 0
 * per tick (how /proc and sysfs files are re-read, the Python sampler's way), and writes each record with one
 * write(2).
 *
 * Usage: edgebench-sampler CLOCK PERIOD_MS ROOT PARENT_PID [SOURCE...]
 *        edgebench-sampler --version
 *   CLOCK       the clock of the script's own stamps: "epochrealtime" (the wall clock to the microsecond, as the
 *               shell's $EPOCHREALTIME) or "uptime" (/proc/uptime's clock, CLOCK_BOOTTIME, here to the nanosecond);
 *               "monotonic" (CLOCK_MONOTONIC to the nanosecond) where the Python agent runs it beside its worker,
 *               whose events are on that clock
 *   PERIOD_MS   the sampling period in milliseconds
 *   ROOT        prefix of every path ("" on a device; a fixture tree in tests)
 *   PARENT_PID  the script's pid: once it is gone (killed outright), the workload is killed and the run folder
 *               (this program's working directory) removed, as sampler.sh's loop does
 *   SOURCE      "PATH:MAX_BYTES:EVERY_NTH_TICK"; a /proc/self/ path means the workload's pid, read from the file
 *               `wpid` in the working directory once the workload has started (the numbers are split off from the
 *               right: PATH may hold colons, intel-rapl:0); a PATH with a `*` component (task/STAR/schedstat: a
 *               process's threads) is every file it matches, listed at each tick in name order, their whole lines
 *               kept while under MAX_BYTES (sampler.sh's pattern sources)
 * Output on stdout (sampler.sh's format): "T <t>" starts a record, "<i>|<line>" is a line of source i, "<i>!" a
 * failed read (the file cannot be opened, or a read of it fails: a workload that exited); a source not due at this
 * tick is absent.  A file is read up to MAX_BYTES and cut back to whole lines when longer (mksh's `read -N`).
 * SIGTERM: one last record of every source, then "L <cpu_ticks> <start> <end>" (this process's CPU time in clock
 * ticks, fields 14-17 of proc(5), and the stamps of the loop's start and last record), and exit 0.
 *
 * Standard C and POSIX only (plus Linux's CLOCK_BOOTTIME and /proc), so any static libc builds it for any ABI.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7 /* Linux's; /proc/uptime reads it */
#endif

#define VERSION "edgebench-sampler 1" /* build.py's VERSION */
#define SELF_PREFIX "/proc/self/"

struct source {
	const char *path;  /* as given */
	const char *tail;  /* after /proc/self/ for the workload's files, else NULL */
	size_t max_bytes;
	unsigned long every;
	int fd;            /* -1: not open (never opened, gone, or a read failed) */
	int pattern;       /* a `*` component: every file it matches, listed at each tick */
	long opened_for;   /* the workload pid a /proc/self/ source's fd belongs to */
	size_t index_len;  /* "<i>" as text */
	char index[24];
};

/* A pattern source's matches at one tick: names kept in a buffer sized at start (no allocation in the loop). */
#define MAX_MATCHES 1024
#define MATCH_NAME 64
static char (*match_names)[MATCH_NAME];
static size_t match_order[MAX_MATCHES];

struct buffer {
	char *data;
	size_t len, cap;
};

static volatile sig_atomic_t last_record;
static int raw_output; /* --raw: the Python sampler's binary records (see main) */
static struct source *sources;
static size_t n_sources;
static const char *root;
static clockid_t clock_id;
static long workload_pid; /* 0 until the `wpid` file names it */
static char *read_buf;
static char *path_buf;
static size_t path_cap;

static void on_term(int sig)
{
	(void)sig;
	last_record = 1;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "edgebench-sampler: %s\n", what);
	exit(2);
}

static void put(struct buffer *b, const char *s, size_t n)
{
	/* the buffer is sized for the largest record at start: no allocation in the loop */
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

/* The time now on the script's clock, as text (kept: the last record's stamp ends the "L" line). */
static char stamp[48];
static size_t stamp_len;

static void take_stamp(void)
{
	struct timespec ts;
	int n;
	clock_gettime(clock_id, &ts);
	if (clock_id == CLOCK_REALTIME)
		n = snprintf(stamp, sizeof stamp, "%lld.%06ld", (long long)ts.tv_sec, ts.tv_nsec / 1000);
	else
		n = snprintf(stamp, sizeof stamp, "%lld.%09ld", (long long)ts.tv_sec, ts.tv_nsec);
	stamp_len = (size_t)n;
}

static int parse_ulong(const char *s, size_t n, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;
	if (n == 0 || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* "PATH:MAX:EVERY", the numbers split off from the right as sampler.sh does */
static void parse_source(struct source *s, const char *spec, size_t i)
{
	const char *every = strrchr(spec, ':');
	const char *max;
	unsigned long max_bytes, n;
	char *path;
	if (every == NULL || every == spec)
		die("a source is PATH:MAX_BYTES:EVERY_NTH_TICK");
	for (max = every - 1; max > spec && *max != ':'; max--)
		;
	if (*max != ':' || parse_ulong(max + 1, (size_t)(every - max - 1), &max_bytes) != 0 ||
	    parse_ulong(every + 1, strlen(every + 1), &n) != 0 || max_bytes == 0 || n == 0)
		die("a source is PATH:MAX_BYTES:EVERY_NTH_TICK with positive numbers");
	path = malloc((size_t)(max - spec) + 1);
	if (path == NULL)
		die("out of memory");
	memcpy(path, spec, (size_t)(max - spec));
	path[max - spec] = '\0';
	s->path = path;
	s->tail = strncmp(path, SELF_PREFIX, strlen(SELF_PREFIX)) == 0 ? path + strlen(SELF_PREFIX) : NULL;
	s->max_bytes = max_bytes;
	s->every = n;
	s->fd = -1;
	s->pattern = strchr(path, '*') != NULL;
	s->opened_for = -1;
	s->index_len = (size_t)snprintf(s->index, sizeof s->index, "%zu", i);
}

/* The workload's pid from `wpid` (written by the script once the workload runs), read until it is there. */
static void read_workload_pid(void)
{
	char text[32];
	ssize_t n;
	unsigned long pid;
	int fd = open("wpid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	if (n > 0 && parse_ulong(text, (size_t)n, &pid) == 0 && pid > 0)
		workload_pid = (long)pid;
}

/* Source s's path on the device now (the workload's pid in place of /proc/self/) in path_buf. */
static const char *open_source_path(struct source *s)
{
	if (s->tail != NULL)
		snprintf(path_buf, path_cap, "%s/proc/%ld/%s", root, workload_pid, s->tail);
	else
		snprintf(path_buf, path_cap, "%s%s", root, s->path);
	return path_buf;
}

static int open_source(struct source *s)
{
	open_source_path(s);
	s->opened_for = workload_pid;
	return open(path_buf, O_RDONLY | O_CLOEXEC);
}

/* A pattern source's bytes now: every file its `*` component matches (names in strcmp order, as a shell's glob
 * sorts them in the C locale), their whole lines while under MAX_BYTES, into read_buf; -1 where none was read. */
static ssize_t read_pattern(struct source *s)
{
	char *star, *suffix, *slash;
	DIR *dir;
	struct dirent *entry;
	size_t n = 0, i, j, used = 0, prefix_len;
	int got = 0;
	char line_path[PATH_MAX];
	if (open_source_path(s) == NULL)
		return -1;
	star = strchr(path_buf, '*');
	slash = star;
	while (slash > path_buf && slash[-1] != '/')
		slash--;
	suffix = star + 1;
	if (slash != star || (*suffix != '/' && *suffix != '\0'))
		return -1; /* only a whole `*` component is a pattern */
	prefix_len = (size_t)(star - path_buf);
	path_buf[prefix_len - (prefix_len > 1 ? 1 : 0)] = '\0';
	dir = opendir(prefix_len > 1 ? path_buf : "/");
	if (dir == NULL)
		return -1;
	while ((entry = readdir(dir)) != NULL && n < MAX_MATCHES) {
		if (entry->d_name[0] == '.' || strlen(entry->d_name) >= MATCH_NAME)
			continue;
		memcpy(match_names[n], entry->d_name, strlen(entry->d_name) + 1);
		/* insertion into name order */
		for (i = n; i > 0 && strcmp(match_names[match_order[i - 1]], entry->d_name) > 0; i--)
			match_order[i] = match_order[i - 1];
		match_order[i] = n++;
	}
	closedir(dir);
	for (i = 0; i < n; i++) {
		char text[4096];
		ssize_t got_bytes;
		size_t start;
		int fd;
		snprintf(line_path, sizeof line_path, "%s/%s%s", prefix_len > 1 ? path_buf : "", match_names[match_order[i]],
			 suffix);
		fd = open(line_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* a thread that ended between the listing and the read */
		got_bytes = read(fd, text, sizeof text);
		close(fd);
		if (got_bytes < 0)
			continue;
		got = 1;
		for (start = 0, j = 0; j <= (size_t)got_bytes; j++) {
			if (j == (size_t)got_bytes || text[j] == '\n') {
				size_t len = j - start;
				if (j == (size_t)got_bytes && len == 0)
					break;
				if (used + len + 1 >= s->max_bytes)
					return used;
				memcpy(read_buf + used, text + start, len);
				read_buf[used + len] = '\n';
				used += len + 1;
				start = j + 1;
			}
		}
	}
	return got ? (ssize_t)used : -1;
}

/* Source s's bytes now (up to its max) into read_buf: their count, or -1 where it cannot be opened or read. */
static ssize_t read_source(struct source *s)
{
	if (s->pattern)
		return read_pattern(s);
	ssize_t got;
	if (s->fd >= 0 && s->tail != NULL && s->opened_for != workload_pid) {
		close(s->fd);
		s->fd = -1;
	}
	if (s->fd < 0)
		s->fd = open_source(s); /* a file that was missing may have appeared: tried again each tick */
	got = s->fd < 0 ? -1 : pread(s->fd, read_buf, s->max_bytes, 0);
	if (got < 0 && s->fd >= 0) { /* gone (a workload's /proc files after it exits: ESRCH): opened again next time */
		close(s->fd);
		s->fd = -1;
	}
	return got;
}

/* Source s in sampler.sh's text: its lines as "<i>|<line>", cut back to whole lines when it filled MAX_BYTES and
 * without its last newline (mksh's `read -N` and the substitutions after it), or "<i>!". */
static void put_lines(struct buffer *b, const struct source *s, ssize_t got)
{
	size_t len, start, i;
	if (got < 0) {
		put(b, s->index, s->index_len);
		put(b, "!\n", 2);
		return;
	}
	len = (size_t)got;
	if (len >= s->max_bytes) {
		for (i = len; i > 0 && read_buf[i - 1] != '\n'; i--)
			;
		if (i > 0)
			len = i - 1;
	}
	if (len > 0 && read_buf[len - 1] == '\n')
		len--;
	if (len == 0)
		return;
	for (start = 0, i = 0; i <= len; i++) {
		if (i == len || read_buf[i] == '\n') {
			put(b, s->index, s->index_len);
			put(b, "|", 1);
			put(b, read_buf + start, i - start);
			put(b, "\n", 1);
			start = i + 1;
		}
	}
}

static void put_le(struct buffer *b, uint64_t v, int bytes)
{
	int i;
	for (i = 0; i < bytes; i++)
		b->data[b->len++] = (char)((v >> (8 * i)) & 0xff);
}

static void write_all(const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			exit(1); /* the record file is gone: nothing left to sample for */
		}
		data += n;
		len -= (size_t)n;
	}
}

/* Marks of the raw format (edgebench.sensors.sampler): a failed read, a source not due at this tick. */
#define RAW_FAILED 0xFFFF
#define RAW_SKIPPED 0xFFFE

static void poll_sources(struct buffer *b, unsigned long tick, int every_source)
{
	struct timespec ts;
	size_t i;
	int pid_read = 0;
	b->len = 0;
	if (raw_output) {
		clock_gettime(clock_id, &ts);
		put_le(b, (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec), 8);
	} else {
		take_stamp();
		put(b, "T ", 2);
		put(b, stamp, stamp_len);
		put(b, "\n", 1);
	}
	for (i = 0; i < n_sources; i++) {
		struct source *s = &sources[i];
		ssize_t got;
		if (tick % s->every != 0 && !every_source) {
			if (raw_output)
				put_le(b, RAW_SKIPPED, 2);
			continue;
		}
		if (s->tail != NULL && workload_pid == 0 && !pid_read) {
			read_workload_pid();
			pid_read = 1;
		}
		got = read_source(s);
		if (!raw_output) {
			put_lines(b, s, got);
		} else if (got < 0) {
			put_le(b, RAW_FAILED, 2);
		} else {
			put_le(b, (uint64_t)got, 2);
			put(b, read_buf, (size_t)got);
		}
	}
	write_all(b->data, b->len);
}

/* Clock ticks of CPU this process used, with its reaped children's (fields 14-17 of /proc/self/stat). */
static unsigned long long own_cpu_ticks(void)
{
	char text[1024];
	unsigned long long sum = 0;
	ssize_t n;
	char *p;
	int field;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	p = strrchr(text, ')'); /* the command name may hold spaces and parentheses: fields count from its end */
	if (p == NULL || p[1] == '\0' || p[2] == '\0')
		return 0;
	p += 3; /* past ") " and the state letter (field 3) */
	for (field = 4; field <= 17; field++) {
		unsigned long long v = strtoull(p, &p, 10);
		if (field >= 14)
			sum += v;
	}
	return sum;
}

/* Kill a process and every descendant, children first, each stopped before its children are looked for. */
static void kill_tree(long pid)
{
	DIR *proc;
	struct dirent *entry;
	char path[64], text[512];
	kill((pid_t)pid, SIGSTOP);
	proc = opendir("/proc");
	if (proc != NULL) {
		while ((entry = readdir(proc)) != NULL) {
			ssize_t n;
			char *p;
			int fd;
			long ppid;
			if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, text, sizeof text - 1);
			close(fd);
			if (n <= 0)
				continue;
			text[n] = '\0';
			p = strrchr(text, ')');
			if (p == NULL || sscanf(p + 1, " %*c %ld", &ppid) != 1)
				continue;
			if (ppid == pid)
				kill_tree(strtol(entry->d_name, NULL, 10));
		}
		closedir(proc);
	}
	kill((pid_t)pid, SIGKILL);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct buffer record;
	struct sigaction action;
	sigset_t blocked, waiting;
	unsigned long tick = 0, parent;
	size_t i, largest = 0, record_cap = 64;
	double period_ms;
	char *end;
	int64_t period_ns, next;
	char work[PATH_MAX], start[48];

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		puts(VERSION);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--raw") == 0) {
		raw_output = 1;
		argv++;
		argc--;
	}
	if (argc < 5)
		die("usage: edgebench-sampler [--raw] CLOCK PERIOD_MS ROOT PARENT_PID [PATH:MAX_BYTES:EVERY_NTH_TICK...]");
	if (strcmp(argv[1], "epochrealtime") == 0)
		clock_id = CLOCK_REALTIME;
	else if (strcmp(argv[1], "uptime") == 0)
		clock_id = CLOCK_BOOTTIME;
	else if (strcmp(argv[1], "monotonic") == 0)
		clock_id = CLOCK_MONOTONIC;
	else
		die("CLOCK is epochrealtime, uptime or monotonic");
	period_ms = strtod(argv[2], &end);
	if (end == argv[2] || *end != '\0' || !(period_ms > 0 && period_ms < 1e9))
		die("PERIOD_MS is a positive number of milliseconds");
	root = argv[3];
	if (parse_ulong(argv[4], strlen(argv[4]), &parent) != 0)
		die("PARENT_PID is a process id");
	if (getcwd(work, sizeof work) == NULL)
		die("cannot read the working directory");
	n_sources = (size_t)(argc - 5);
	sources = calloc(n_sources ? n_sources : 1, sizeof *sources);
	if (sources == NULL)
		die("out of memory");
	for (i = 0; i < n_sources; i++) {
		struct source *s = &sources[i];
		parse_source(s, argv[5 + i], i);
		if (raw_output && s->max_bytes >= RAW_SKIPPED)
			die("--raw reads at most 65533 bytes of a source");
		if (s->max_bytes > largest)
			largest = s->max_bytes;
		/* worst case: every byte a line break, each line with its "<i>|" and a newline */
		record_cap += (s->max_bytes + 1) * (s->index_len + 2) + s->max_bytes + s->index_len + 2;
	}
	for (i = 0; i < n_sources; i++) {
		size_t need = strlen(root) + strlen(sources[i].path) + 32;
		if (need > path_cap)
			path_cap = need;
	}
	path_buf = malloc(path_cap ? path_cap : 64);
	match_names = malloc(sizeof *match_names * MAX_MATCHES);
	if (path_buf == NULL || match_names == NULL)
		die("out of memory");
	read_buf = malloc(largest + 1);
	record.data = malloc(record_cap);
	if (read_buf == NULL || record.data == NULL)
		die("out of memory");
	record.len = 0;
	record.cap = record_cap;

	/* SIGTERM asks for the last record: blocked but while waiting for the next tick, so none is missed */
	memset(&action, 0, sizeof action);
	action.sa_handler = on_term;
	sigemptyset(&action.sa_mask);
	sigaction(SIGTERM, &action, NULL);
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigprocmask(SIG_BLOCK, &blocked, &waiting);
	sigdelset(&waiting, SIGTERM);

	period_ns = (int64_t)(period_ms * 1e6);
	take_stamp();
	memcpy(start, stamp, stamp_len + 1);
	next = monotonic_ns();
	for (;;) {
		struct timespec left = {0, 0};
		int64_t now;
		poll_sources(&record, tick, last_record);
		tick++;
		/* the last record asked for comes first: the script's cleanup sends SIGTERM and exits at once, and an
		 * orphan check before it took that exit for a script killed outright and left out the "L" line */
		if (last_record && raw_output)
			return 0; /* the Python agent takes the CPU time from wait4(2) */
		if (last_record) {
			char text[160];
			int n = snprintf(text, sizeof text, "L %llu %s %s\n", own_cpu_ticks(), start, stamp);
			write_all(text, (size_t)n);
			return 0;
		}
		if ((unsigned long)getppid() != parent) {
			/* the script was killed outright (no trap ran): stop, with its workload */
			if (workload_pid == 0)
				read_workload_pid();
			if (workload_pid > 0)
				kill_tree(workload_pid);
			nftw(work, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
			return 0;
		}
		next += period_ns;
		now = monotonic_ns();
		if (next <= now) {
			next = now; /* overran a whole period: realign rather than burst */
		} else {
			left.tv_sec = (time_t)((next - now) / 1000000000);
			left.tv_nsec = (long)((next - now) % 1000000000);
		}
		/* sleeps until the next tick; SIGTERM (unblocked only here) cuts it short */
		pselect(0, NULL, NULL, NULL, &left, &waiting);
	}
}
