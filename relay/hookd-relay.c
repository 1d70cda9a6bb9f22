/*
 * hookd-relay, compiled: the command-hook door to hookd, started in about a
 * millisecond instead of a Python interpreter's ~10 ms.
 *
 * It is a line-for-line twin of client/hookd_client/relay.py (the reference):
 * same arguments ([--agent AGENT] EVENT [--socket PATH] [--fail-closed] [--timeout S]
 * [--connect-timeout S], -h/--help), same socket-path rule and the same check of the
 * socket and every directory to it as hookd_client/sockpath.py, same deadlines (here
 * SO_RCVTIMEO/SO_SNDTIMEO armed with the time left), same two frames
 * (hello, relay) of docs/protocol.md, same output and exit code, and the same
 * fail-open / fail-closed messages when the daemon cannot answer.  Anything
 * changed in one must be changed in the other; tests/doors/test_relay.py runs
 * every case against both.
 *
 * Why C and hand-written MessagePack: gcc/cc is on every machine hookd runs on
 * (it needs no toolchain download, unlike Rust or Zig), libc is all this
 * needs, and the relay encodes two small maps and reads one reply — a
 * library would be more code to vet than the ~100 lines of codec below.
 *
 * Build: cc -O2 -Wall -Wextra -Werror -o hookd-relay-c relay/hookd-relay.c
 * (scripts/build-relay does it; -static when the C library allows it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The relay's ceiling for a reply frame and for the hook input it forwards,
 * as in relay.py (_MAX_REPLY).  The daemon never sends a frame over the
 * max_frame it announces (16 MiB by default), so this only bounds memory
 * against a peer that is not hookd. */
#define MAX_FRAME (64u * 1024u * 1024u)

/* ---- a growable byte buffer; every append is bounds-checked ------------- */

struct buf {
    unsigned char *p;
    size_t len, cap;
};

/* --fail-closed: every failure, even running out of memory, then blocks (exit 2). */
static int fail_closed = 0;

static void die_oom(void)
{
    /* Out of memory while building two small frames: nothing sensible is
     * left to do but say so and exit as the entry's failure mode says. */
    static const char msg[] = "hookd-relay failed: MemoryError: out of memory\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(fail_closed ? 2 : 1);
}

/* Room for n more bytes after b->len. */
static void room(struct buf *b, size_t n)
{
    if (n > SIZE_MAX - b->len)
        die_oom();
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) {
            if (cap > SIZE_MAX / 2)
                die_oom();
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (!p)
            die_oom();
        b->p = p;
        b->cap = cap;
    }
}

static void put(struct buf *b, const void *data, size_t n)
{
    room(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_byte(struct buf *b, unsigned char c) { put(b, &c, 1); }

static void put_be(struct buf *b, uint64_t v, int bytes)
{
    unsigned char out[8];
    for (int i = 0; i < bytes; i++)
        out[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(b, out, (size_t)bytes);
}

/* ---- MessagePack: the encoder subset the two frames need --------------- */

static void mp_uint(struct buf *b, uint64_t n)
{
    if (n < 128) {
        put_byte(b, (unsigned char)n);
    } else if (n <= 0xff) {
        put_byte(b, 0xcc);
        put_be(b, n, 1);
    } else if (n <= 0xffff) {
        put_byte(b, 0xcd);
        put_be(b, n, 2);
    } else if (n <= 0xffffffffu) {
        put_byte(b, 0xce);
        put_be(b, n, 4);
    } else {
        put_byte(b, 0xcf);
        put_be(b, n, 8);
    }
}

/* Lengths are at most MAX_FRAME (checked by the callers), so 32 bits hold them. */
static void mp_str(struct buf *b, const char *s, size_t n)
{
    if (n < 32) {
        put_byte(b, (unsigned char)(0xa0 | n));
    } else if (n < 256) {
        put_byte(b, 0xd9);
        put_be(b, n, 1);
    } else if (n < 65536) {
        put_byte(b, 0xda);
        put_be(b, n, 2);
    } else {
        put_byte(b, 0xdb);
        put_be(b, n, 4);
    }
    put(b, s, n);
}

static void mp_cstr(struct buf *b, const char *s) { mp_str(b, s, strlen(s)); }

static void mp_bin(struct buf *b, const unsigned char *d, size_t n)
{
    if (n < 256) {
        put_byte(b, 0xc4);
        put_be(b, n, 1);
    } else if (n < 65536) {
        put_byte(b, 0xc5);
        put_be(b, n, 2);
    } else {
        put_byte(b, 0xc6);
        put_be(b, n, 4);
    }
    put(b, d, n);
}

static void mp_map(struct buf *b, uint32_t n)
{
    if (n < 16) {
        put_byte(b, (unsigned char)(0x80 | n));
    } else if (n < 65536) {
        put_byte(b, 0xde);
        put_be(b, n, 2);
    } else {
        put_byte(b, 0xdf);
        put_be(b, n, 4);
    }
}

/* ---- MessagePack: a bounds-checked reader for the reply ----------------- */

struct rd {
    const unsigned char *p;
    size_t n, i;
};

/* What the relay wants from one value: its type and, for str/int, the value. */
struct val {
    enum { V_OTHER, V_NIL, V_STR, V_INT } t;
    const char *s;
    size_t slen;
    int64_t i;
};

static int need(struct rd *r, size_t k) { return r->n - r->i >= k; }

static uint64_t be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Reads (or skips) one value; 0 on success, -1 on a truncated or unknown one.
 * Depth is capped so that a hostile reply of nested arrays cannot exhaust the
 * stack; hookd's replies are at most a few levels deep. */
static int mp_read(struct rd *r, struct val *out, int depth)
{
    struct val dummy;
    if (!out)
        out = &dummy;
    out->t = V_OTHER;
    if (depth > 64 || !need(r, 1))
        return -1;
    unsigned t = r->p[r->i++];
    uint64_t count = 0;
    int width = 0, is_map = 0;
    if (t < 0x80 || t >= 0xe0) {
        out->t = V_INT;
        out->i = t < 0x80 ? (int64_t)t : (int64_t)t - 0x100;
        return 0;
    }
    if (t <= 0x8f || (t >= 0x90 && t <= 0x9f)) {
        count = t & 0x0f;
        is_map = t <= 0x8f;
        goto container;
    }
    if (t >= 0xa0 && t <= 0xbf) {
        count = t & 0x1f;
        goto bytes;
    }
    switch (t) {
    case 0xc0: out->t = V_NIL; return 0;
    case 0xc2: case 0xc3: return 0;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
        width = 1 << (t - 0xcc);
        if (!need(r, (size_t)width))
            return -1;
        out->t = V_INT;
        out->i = (int64_t)be(r->p + r->i, width); /* a uint64 over INT64_MAX wraps; no reply has one */
        r->i += (size_t)width;
        return 0;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        width = 1 << (t - 0xd0);
        if (!need(r, (size_t)width))
            return -1;
        uint64_t u = be(r->p + r->i, width);
        int shift = 64 - 8 * width;
        out->t = V_INT;
        out->i = shift ? (int64_t)(u << shift) >> shift : (int64_t)u;
        r->i += (size_t)width;
        return 0;
    }
    case 0xca: case 0xcb:
        width = t == 0xca ? 4 : 8;
        if (!need(r, (size_t)width))
            return -1;
        r->i += (size_t)width;
        return 0;
    case 0xd9: case 0xda: case 0xdb: case 0xc4: case 0xc5: case 0xc6:
        width = (t == 0xd9 || t == 0xc4) ? 1 : (t == 0xda || t == 0xc5) ? 2 : 4;
        if (!need(r, (size_t)width))
            return -1;
        count = be(r->p + r->i, width);
        r->i += (size_t)width;
        if (t >= 0xc4 && t <= 0xc6) { /* bin: skipped, never in a reply field we read */
            if (!need(r, count))
                return -1;
            r->i += count;
            return 0;
        }
        goto bytes;
    case 0xdc: case 0xdd: case 0xde: case 0xdf:
        width = (t == 0xdc || t == 0xde) ? 2 : 4;
        if (!need(r, (size_t)width))
            return -1;
        count = be(r->p + r->i, width);
        r->i += (size_t)width;
        is_map = t >= 0xde;
        goto container;
    default:
        return -1; /* ext types: hookd sends none */
    }
bytes:
    if (!need(r, count))
        return -1;
    out->t = V_STR;
    out->s = (const char *)r->p + r->i;
    out->slen = count;
    r->i += count;
    return 0;
container:
    /* Each element takes at least a byte, so a count larger than what is
     * left is malformed; checking it first keeps the loop bounded. */
    if (count > r->n - r->i)
        return -1;
    for (uint64_t k = 0; k < count * (is_map ? 2 : 1); k++)
        if (mp_read(r, NULL, depth + 1) < 0)
            return -1;
    return 0;
}

/* ---- output ------------------------------------------------------------- */

static void write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* the agent closed the pipe: nobody is left to tell */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The failure message: any length and any bytes (a NUL too), as relay.py's, so that a
 * long path or a long error from the daemon is said whole, never cut. */
static struct buf why;

/* Appends to `why`. */
__attribute__((format(printf, 1, 2))) static void say_more(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = (size_t)vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    room(&why, n + 1); /* vsnprintf ends what it writes with a NUL */
    va_start(ap, fmt);
    vsnprintf((char *)why.p + why.len, n + 1, fmt, ap);
    va_end(ap);
    why.len += n;
}

/* Replaces `why`. */
#define say(...) (why.len = 0, say_more(__VA_ARGS__))

/* --agent AGENT: whose hook this is (NULL: Claude Code, and then the relay
 * frame has no "agent" key, byte for byte as before agents existed). */
static const char *agent = NULL;

/* Agents that show a hook's systemMessage (relay.py's _SYSTEM_MESSAGE_AGENTS; NULL
 * is Claude Code); every other agent gets the fail-open message on stderr. */
static int shows_system_message(void)
{
    static const char *const names[] = {"codex", "gemini", "qwen", "factory",
                                        "claude-agent-sdk"};
    if (!agent)
        return 1;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(agent, names[k]) == 0)
            return 1;
    return 0;
}

/* `why` as a JSON string, escaped as relay.py's _json_str. */
static void put_json_why(struct buf *out)
{
    put_byte(out, '"');
    for (size_t k = 0; k < why.len; k++) {
        unsigned char c = why.p[k];
        if (c == '"' || c == '\\') {
            put_byte(out, '\\');
            put_byte(out, c);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(out, esc, 6);
        } else {
            put_byte(out, c);
        }
    }
    put_byte(out, '"');
}

/* {<head>"why"}\n on stdout, exit 0. */
static int say_json(const char *head)
{
    struct buf out = {0};
    put(&out, head, strlen(head));
    put_json_why(&out);
    put(&out, "}\n", 2);
    write_all(1, out.p, out.len);
    return 0;
}

static int is_one_of(const char *name, const char *const *names, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(name, names[k]) == 0)
            return 1;
    return 0;
}

/* The event named on the command line (Copilot's fail-open/closed depend on it). */
static const char *event = NULL;

/* Copilot CLI (relay.py's _copilot_fail): any non-zero exit of a preToolUse or
 * permissionRequest hook denies, exit 2 elsewhere is a visible warning that
 * blocks nothing; so fail open is context on preToolUse, stderr with exit 0 on
 * permissionRequest and exit 2 + stderr elsewhere, and fail closed is a JSON
 * deny/block where Copilot can block. */
static int copilot_fail(int fail_closed)
{
    static const char *const gates[] = {"preToolUse", "PreToolUse"};
    static const char *const blocks[] = {"userPromptSubmitted", "UserPromptSubmit",
                                         "postToolUse",         "PostToolUse",
                                         "agentStop",           "Stop",
                                         "subagentStop",        "SubagentStop"};
    if (is_one_of(event, gates, sizeof gates / sizeof gates[0]))
        return say_json(fail_closed
                            ? "{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": "
                            : "{\"additionalContext\": ");
    static const char *const permission[] = {"permissionRequest", "PermissionRequest"};
    if (is_one_of(event, permission, sizeof permission / sizeof permission[0])) {
        if (fail_closed)
            return say_json("{\"behavior\": \"deny\", \"message\": ");
        write_all(2, why.p, why.len);
        write_all(2, "\n", 1);
        return 0;
    }
    if (fail_closed && is_one_of(event, blocks, sizeof blocks / sizeof blocks[0]))
        return say_json("{\"decision\": \"block\", \"reason\": ");
    write_all(2, why.p, why.len);
    write_all(2, "\n", 1);
    return 2;
}

/* Fail open (exit 0 with a visible systemMessage) or closed (exit 2, reason on
 * stderr): a missing daemon must not freeze the agent unless a hook asked to
 * block when it cannot run.  Exit 2 blocks for Claude Code, Codex and Gemini
 * CLI; Copilot has its own rules (copilot_fail), Cline blocks only in JSON; an agent that shows no
 * systemMessage gets the fail-open message on stderr instead. */
static int fail(int fail_closed)
{
    if (agent && strcmp(agent, "copilot") == 0)
        return copilot_fail(fail_closed);
    /* Cline reads no exit code (relay.py's fail_closed): its block is JSON. */
    if (fail_closed && agent && strcmp(agent, "cline") == 0)
        return say_json("{\"cancel\": true, \"errorMessage\": ");
    if (fail_closed || !shows_system_message()) {
        write_all(2, why.p, why.len);
        write_all(2, "\n", 1);
        return fail_closed ? 2 : 0;
    }
    return say_json("{\"systemMessage\": ");
}

/* ---- the socket path (hookd_client/sockpath.py) -------------------------- */

static char fallback[64];

static int not_yours(const char *where, const char *kind, uid_t owner, uid_t uid)
{
    say_more("%s belongs to uid %u, not to you (uid %u): another user may have created "
             "this %s to intercept hookd's traffic",
             where, (unsigned)owner, (unsigned)uid, kind);
    return 1;
}

/* The index past the slashes and `.` components at s[at]: sockpath._parts drops both. */
static size_t past_separators(const char *s, size_t at)
{
    while (s[at] == '/' || (s[at] == '.' && (s[at + 1] == '/' || !s[at + 1])))
        at++;
    return at;
}

/* Why `path` must not be connected to, appended to `why`; 0 when it may be.
 * sockpath.unsafe_reason's rule, step for step: lstat each component from /,
 * following by hand a symlink the caller or root owns (at most 40); every
 * directory the caller's or root's and not writable by others unless sticky;
 * the socket a socket of the caller's.  Missing on the way: 0 ("not running"). */
static int unsafe_reason(const char *path)
{
    static char done[PATH_MAX + 1], target[PATH_MAX + 1];
    /* What is left to walk, NUL-terminated; as long as the path (any length, as in
     * Python), and rebuilt as target + "/" + tail when a link is followed. */
    struct buf rest = {0};
    uid_t uid = getuid();
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            say_more("cannot check %s: %s", path, strerror(errno));
            return 1;
        }
        put(&rest, cwd, strlen(cwd));
        put_byte(&rest, '/');
    }
    put(&rest, path, strlen(path) + 1);
    done[0] = 0;
    size_t at = 0; /* the next component starts at rest[at] */
    int hops = 0;
    for (;;) {
        const char *walk = (const char *)rest.p;
        at = past_separators(walk, at);
        if (!walk[at])
            break;
        size_t len = strcspn(walk + at, "/");
        const char *name = walk + at;
        at += len;
        if (len == 2 && name[0] == '.' && name[1] == '.') {
            char *slash = strrchr(done, '/');
            if (slash)
                *slash = 0;
            continue;
        }
        size_t dlen = strlen(done);
        if (dlen + 1 + len >= sizeof done) { /* as lstat would say, naming the same path */
            say_more("cannot check %s/%.*s: File name too long", done, (int)len, name);
            return 1;
        }
        done[dlen] = '/';
        memcpy(done + dlen + 1, name, len);
        done[dlen + 1 + len] = 0;
        at = past_separators(walk, at);
        int last = !walk[at]; /* as in Python, where `a/.` ends at `a` */
        struct stat st;
        if (lstat(done, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return 0; /* missing is "not running", not unsafe */
            say_more("cannot check %s: %s", done, strerror(errno));
            return 1;
        }
        if (S_ISLNK(st.st_mode)) {
            if (st.st_uid != uid && st.st_uid != 0)
                return not_yours(done, "symlink", st.st_uid, uid);
            if (++hops > 40) {
                say_more("cannot check %s: too many levels of symbolic links", path);
                return 1;
            }
            ssize_t n = readlink(done, target, sizeof target - 1);
            if (n < 0) {
                say_more("cannot check %s: %s", done, strerror(errno));
                return 1;
            }
            /* the rest of the path now follows the link's target */
            struct buf next = {0};
            put(&next, target, (size_t)n);
            put_byte(&next, '/');
            put(&next, walk + at, strlen(walk + at) + 1);
            free(rest.p);
            rest = next;
            at = 0;
            char *slash = strrchr(done, '/');
            *slash = 0; /* the link's directory */
            if (target[0] == '/')
                done[0] = 0;
            continue;
        }
        if (last) { /* the socket itself */
            if (!S_ISSOCK(st.st_mode)) {
                say_more("%s is not a socket; hookd's socket is one the daemon made", done);
                return 1;
            }
            if (st.st_uid != uid)
                return not_yours(done, "socket", st.st_uid, uid);
            return 0;
        }
        if (!S_ISDIR(st.st_mode))
            return 0; /* connecting fails (ENOTDIR): "not running" */
        if (st.st_uid != uid && st.st_uid != 0)
            return not_yours(done, "directory", st.st_uid, uid);
        if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
            say_more("%s is writable by other users (mode %04o) and not sticky: anyone could "
                     "put their own socket in it; hookd's directory must be private (0700)",
                     done, (unsigned)(st.st_mode & 07777));
            return 1;
        }
    }
    say_more("%s is a directory, not a socket", path);
    return 1;
}

/* $HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd/hookd.sock when that directory
 * exists (stat, as os.path.isdir), else /tmp/hookd-<uid>/hookd.sock. */
static const char *default_socket_path(struct buf *store)
{
    const char *env = getenv("HOOKD_SOCKET");
    if (env && *env)
        return env;
    const char *base = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (base && *base && stat(base, &st) == 0 && S_ISDIR(st.st_mode)) {
        put(store, base, strlen(base));
        put(store, "/hookd/hookd.sock", 18); /* with the NUL */
    } else {
        put(store, fallback, strlen(fallback));
        put(store, "/hookd.sock", 12);
    }
    return (const char *)store->p;
}

/* ---- the request ---------------------------------------------------------- */

/* Strict UTF-8, as Python's decoder: no overlong forms, no surrogates, nothing
 * over U+10FFFF.  Entries that fail are left out of `env`, as relay.py does
 * (a msgpack str must be UTF-8). */
static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t more;
        unsigned lo = 0x80, hi = 0xbf;
        if (c < 0x80) { i++; continue; }
        else if (c >= 0xc2 && c <= 0xdf) more = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            more = 2;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            more = 3;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        } else return 0;
        if (n - i - 1 < more)
            return 0;
        for (size_t k = 1; k <= more; k++) {
            unsigned d = s[i + k];
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
                return 0;
        }
        i += more + 1;
    }
    return 1;
}

static int env_entry_ok(const char *e)
{
    const char *eq = strchr(e, '=');
    return eq && utf8_ok((const unsigned char *)e, strlen(e));
}

/* Appends one frame (4-byte big-endian length, then the body) to `out`. */
static void end_frame(struct buf *out, size_t start)
{
    size_t body = out->len - start - 4;
    for (int k = 0; k < 4; k++)
        out->p[start + (size_t)k] = (unsigned char)(body >> (8 * (3 - k)));
}

/* CLAUDE_PID when it is all ASCII digits (str.isdigit), else -1; -2 when it
 * does not fit MessagePack's uint64 (relay.py fails with "integer too large"). */
static int claude_pid(uint64_t *pid)
{
    const char *s = getenv("CLAUDE_PID");
    if (!s || !*s)
        return -1;
    uint64_t v = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *pid = v;
    return 0;
}

static void build_frames(struct buf *out, const char *event, const unsigned char *input,
                         size_t ilen, int has_pid, uint64_t pid)
{
    size_t start = out->len;
    put(out, "\0\0\0\0", 4);
    mp_map(out, has_pid ? 4 : 3);
    mp_cstr(out, "kind"), mp_cstr(out, "hello");
    mp_cstr(out, "version"), mp_uint(out, 1);
    mp_cstr(out, "client"), mp_cstr(out, "hookd-relay");
    if (has_pid)
        mp_cstr(out, "pid"), mp_uint(out, pid);
    end_frame(out, start);

    start = out->len;
    put(out, "\0\0\0\0", 4);
    mp_map(out, agent ? 7 : 6);
    mp_cstr(out, "kind"), mp_cstr(out, "relay");
    mp_cstr(out, "id"), mp_uint(out, 1);
    mp_cstr(out, "event"), mp_cstr(out, event);
    mp_cstr(out, "input"), mp_bin(out, input, ilen);
    uint32_t count = 0;
    for (char **e = environ; *e; e++)
        count += (uint32_t)env_entry_ok(*e);
    mp_cstr(out, "env");
    mp_map(out, count);
    uint32_t written = 0;
    for (char **e = environ; *e && written < count; e++) {
        if (!env_entry_ok(*e))
            continue;
        const char *eq = strchr(*e, '=');
        mp_str(out, *e, (size_t)(eq - *e));
        mp_cstr(out, eq + 1);
        written++;
    }
    if (agent)
        mp_cstr(out, "agent"), mp_cstr(out, agent);
    mp_cstr(out, "pid"), mp_uint(out, has_pid ? pid : (uint64_t)getppid());
    end_frame(out, start);
}

/* ---- deadlines (relay.py's _Clock) ------------------------------------------ */

static double total_s = -1, greet_s = 10; /* --timeout, --connect-timeout */
static double started;                    /* CLOCK_MONOTONIC at the start of the exchange */
static int greeted;                       /* the daemon's welcome has arrived */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each wait on the socket gets the time left as SO_RCVTIMEO/SO_SNDTIMEO (which
 * also bound a blocking connect on a full backlog): welcome within greet_s, the
 * reply within total_s, both from the start. */
static void arm(int fd)
{
    double limit = greeted || total_s < greet_s ? total_s : greet_s;
    double left = limit - (now() - started);
    if (left < 0.001)
        left = 0.001;
    struct timeval tv = {.tv_sec = (time_t)left,
                         .tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void say_late(void)
{
    if (greet_s > total_s)
        greet_s = total_s; /* as relay.py's _Clock: the greeting is part of the exchange */
    if (greeted)
        say("hookd failed to answer: no reply within %g s (--timeout)", total_s);
    else
        say("hookd failed to answer: no welcome within %g s: the daemon took the connection "
            "but does not answer (stopped, wedged, or a socket activation that did not start "
            "it; --connect-timeout)",
            greet_s);
}

static int timed_out(void) { return errno == EAGAIN || errno == EWOULDBLOCK; }

/* Reads exactly n bytes; 0, or -1 with `why` set. */
static int recv_exact(int fd, unsigned char *p, size_t n)
{
    while (n) {
        arm(fd); /* each wait gets only the time left: a trickle cannot stretch it */
        ssize_t got = recv(fd, p, n < (1u << 20) ? n : (1u << 20), 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && timed_out()) {
            say_late();
            return -1;
        }
        if (got < 0) {
            say("hookd failed to answer: [Errno %d] %s", errno,
                     strerror(errno));
            return -1;
        }
        if (got == 0) {
            say(
                     "hookd failed to answer: hookd closed the connection before replying");
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* A field of an error frame, appended to `why`: a str as its bytes, whole; anything else
 * "None", as relay.py says it. */
static void say_field(const struct val *v)
{
    if (v->t == V_STR)
        put(&why, v->s, v->slen);
    else
        say_more("None");
}

/* Reads frames until the relay_reply for id 1 (or an error); writes the
 * hook's output and returns its exit code, or -1 with `why` set. */
static int read_reply(int fd)
{
    for (;;) {
        unsigned char header[4];
        if (recv_exact(fd, header, 4) < 0)
            return -1;
        uint32_t size = (uint32_t)be(header, 4);
        if (size > MAX_FRAME) {
            say("hookd failed to answer: reply frame too large (%u bytes)",
                     size);
            return -1;
        }
        unsigned char *body = malloc(size ? size : 1);
        if (!body)
            die_oom();
        if (recv_exact(fd, body, size) < 0)
            return -1;
        struct rd r = {body, size, 0};
        if (!need(&r, 1) || !((body[0] >= 0x80 && body[0] <= 0x8f) || body[0] == 0xde ||
                              body[0] == 0xdf)) {
            say("hookd failed to answer: reply is not a map");
            return -1;
        }
        uint64_t count;
        unsigned t = body[r.i++];
        if (t <= 0x8f) {
            count = t & 0x0f;
        } else {
            int width = t == 0xde ? 2 : 4;
            if (!need(&r, (size_t)width))
                goto malformed;
            count = be(body + r.i, width);
            r.i += (size_t)width;
        }
        struct val kind = {0}, id = {0}, out = {0}, err = {0}, exit_code = {0}, code = {0},
                   msg = {0};
        for (uint64_t k = 0; k < count; k++) {
            struct val key, v;
            if (mp_read(&r, &key, 1) < 0 || mp_read(&r, &v, 1) < 0)
                goto malformed;
            if (key.t != V_STR)
                continue;
#define IS(name) (key.slen == sizeof name - 1 && memcmp(key.s, name, key.slen) == 0)
            if (IS("kind")) kind = v;
            else if (IS("id")) id = v;
            else if (IS("stdout")) out = v;
            else if (IS("stderr")) err = v;
            else if (IS("exit_code")) exit_code = v;
            else if (IS("code")) code = v;
            else if (IS("message")) msg = v;
#undef IS
        }
#define KIND(name) (kind.t == V_STR && kind.slen == sizeof name - 1 && \
                    memcmp(kind.s, name, kind.slen) == 0)
        if (KIND("relay_reply") && id.t == V_INT && id.i == 1) {
            if (out.t == V_STR && out.slen)
                write_all(1, out.s, out.slen);
            if (err.t == V_STR && err.slen)
                write_all(2, err.s, err.slen);
            /* exit() keeps the low 8 bits, as sys.exit(n) does */
            return exit_code.t == V_INT ? (int)(exit_code.i & 0xff) : 0;
        }
        if (KIND("welcome"))
            greeted = 1;
        if (KIND("error")) {
            say("hookd failed to answer: hookd refused the event (");
            say_field(&code);
            say_more("): ");
            say_field(&msg);
            return -1;
        }
#undef KIND
        free(body);
        continue;
    malformed:
        say("hookd failed to answer: malformed reply frame");
        return -1;
    }
}

static const char usage_text[] =
    "usage: hookd-relay [--agent AGENT] EVENT [--socket PATH] [--fail-closed]\n"
    "                   [--timeout SECONDS] [--connect-timeout SECONDS]\n";

static const char help_text[] =
    "\n"
    "Hand one hook event (its JSON on stdin) to the hookd daemon and answer as the\n"
    "command hook would: the reply's stdout, stderr and exit code.\n"
    "\n"
    "  EVENT                  the hook event, as the agent names it (PreToolUse, ...)\n"
    "  --agent AGENT          whose hook this is (codex, gemini, copilot, ...; default: Claude Code)\n"
    "  --socket PATH          the daemon's socket (default: $HOOKD_SOCKET, else\n"
    "                         $XDG_RUNTIME_DIR/hookd/hookd.sock, else /tmp/hookd-$UID/hookd.sock)\n"
    "  --fail-closed          when hookd cannot answer, block (exit 2, reason on stderr)\n"
    "                         instead of going ahead with a visible message\n"
    "  --timeout SECONDS      deadline for the whole exchange (default: $HOOKD_RELAY_TIMEOUT,\n"
    "                         else 3 s under Claude Code's timeout for EVENT: 27 or 597)\n"
    "  --connect-timeout SECONDS\n"
    "                         deadline for the daemon's greeting (default:\n"
    "                         $HOOKD_RELAY_CONNECT_TIMEOUT, else 10)\n"
    "  -h, --help             show this and exit\n"
    "\n"
    "Before sending anything the socket must be yours and so must every directory on\n"
    "the way to it (or root's; shared ones sticky): see docs/claude-code.md.\n";

/* Bad usage is a failure too: under --fail-closed it blocks (exit 2). */
static int usage(void)
{
    write_all(2, usage_text, sizeof usage_text - 1);
    return fail_closed ? 2 : 1;
}

/* relay.py's deadline_for: 3 s under the agent's timeout (half of it under 6 s). */
static double deadline_for(double agent_timeout)
{
    double a = agent_timeout - 3, b = agent_timeout / 2;
    return a > b ? a : b;
}

/* --NAME or $ENV as seconds into *out (untouched when neither is set); -1 with
 * `why` set when the value is not a number of seconds over 0 (relay.py's _seconds). */
static int seconds(const char *flag, const char *name, const char *env, double *out)
{
    const char *text = flag && *flag ? flag : getenv(env);
    if (!text || !*text)
        return 0;
    /* A decimal number between blanks, as relay.py reads it: strtod alone would also
     * take hex (0x10), and Python's float `_` and other scripts' digits. */
    static const char blanks[] = " \t\n\r\v\f";
    const char *digits = text + strspn(text, blanks);
    size_t n = strspn(digits, "0123456789+-.eE");
    char *end;
    double v = strtod(digits, &end);
    if (n == 0 || end != digits + n || digits[n + strspn(digits + n, blanks)] ||
        !(v > 0 && v < 1e9)) {
        if (flag && *flag)
            say("hookd-relay: --%s must be a number of seconds over 0, not '%s'", name, text);
        else
            say("hookd-relay: $%s must be a number of seconds over 0, not '%s'", env, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* fd 0-2 closed by whoever started us: hold them with /dev/null, so that the
 * socket never lands on fd 1 or 2 (where our own messages would go to hookd). */
static int stdin_closed;
static void hold_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        if (fd == 0)
            stdin_closed = 1;
        int held = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (held >= 0 && held != fd) {
            dup2(held, fd);
            close(held);
        }
    }
}

int main(int argc, char **argv)
{
    /* As in Python: a closed pipe is an EPIPE error to handle, not a kill. */
    signal(SIGPIPE, SIG_IGN);
    hold_std_fds();
    const char *explicit = NULL, *timeout_arg = NULL, *greet_arg = NULL;
    int help = 0;
    for (int k = 1; k < argc; k++)
        if (strcmp(argv[k], "--fail-closed") == 0)
            fail_closed = 1;
    for (int k = 1; k < argc; k++) {
        const char *arg = argv[k];
        if (strcmp(arg, "--fail-closed") == 0)
            ;
        else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
            help = 1;
        else if (strcmp(arg, "--socket") == 0 && k + 1 < argc)
            explicit = argv[++k];
        else if (strncmp(arg, "--socket=", 9) == 0)
            explicit = arg + 9;
        else if (strcmp(arg, "--agent") == 0 && k + 1 < argc)
            agent = argv[++k];
        else if (strncmp(arg, "--agent=", 8) == 0)
            agent = arg + 8;
        else if (strcmp(arg, "--timeout") == 0 && k + 1 < argc)
            timeout_arg = argv[++k];
        else if (strncmp(arg, "--timeout=", 10) == 0)
            timeout_arg = arg + 10;
        else if (strcmp(arg, "--connect-timeout") == 0 && k + 1 < argc)
            greet_arg = argv[++k];
        else if (strncmp(arg, "--connect-timeout=", 18) == 0)
            greet_arg = arg + 18;
        else if (!event && arg[0] != '-')
            event = arg;
        else
            return usage();
    }
    if (help) {
        write_all(1, usage_text, sizeof usage_text - 1);
        write_all(1, help_text, sizeof help_text - 1);
        return 0;
    }
    if (!event)
        return usage();
    if (agent && (!*agent || strcmp(agent, "claude") == 0))
        agent = NULL; /* Claude Code is the default door */
    {
        static const char *const short_cc[] = {"UserPromptSubmit", "PreModelSwitch",
                                               "PostModelSwitch"};
        total_s = deadline_for(!agent && is_one_of(event, short_cc, 3) ? 30.0 : 600.0);
    }
    if (seconds(timeout_arg, "timeout", "HOOKD_RELAY_TIMEOUT", &total_s) < 0 ||
        seconds(greet_arg, "connect-timeout", "HOOKD_RELAY_CONNECT_TIMEOUT", &greet_s) < 0)
        return fail(fail_closed);

    /* The hook input, forwarded as raw bytes: the daemon parses it. */
    struct buf input = {0};
    for (;;) {
        unsigned char chunk[65536];
        ssize_t got = stdin_closed ? (errno = 0, -1) : read(0, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            say("hookd-relay cannot read the hook input on stdin: %s",
                stdin_closed ? "stdin is closed" : strerror(errno));
            return fail(fail_closed);
        }
        if (got == 0)
            break;
        if (input.len + (size_t)got > MAX_FRAME - 4096) {
            say("hookd failed to answer: hook input over %u bytes",
                     MAX_FRAME - 4096);
            return fail(fail_closed);
        }
        put(&input, chunk, (size_t)got);
    }

    snprintf(fallback, sizeof fallback, "/tmp/hookd-%u", (unsigned)getuid());
    struct buf path_store = {0};
    const char *path = explicit && *explicit ? explicit : default_socket_path(&path_store);

    uint64_t pid = 0;
    int pid_state = claude_pid(&pid);
    started = now();
    say("hookd-relay refused to connect to %s: ", path);
    if (unsafe_reason(path))
        return fail(fail_closed);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        say("hookd failed to answer: [Errno %d] %s", errno, strerror(errno));
        return fail(fail_closed);
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    /* Python allows the full sun_path without a terminating NUL; so does Linux. */
    if (plen > sizeof addr.sun_path) {
        say("hookd is not running: AF_UNIX path too long (socket %s)", path);
        return fail(fail_closed);
    }
    memcpy(addr.sun_path, path, plen);
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
    int rc;
    arm(fd);
    while ((rc = connect(fd, (struct sockaddr *)&addr, alen)) < 0 && errno == EINTR)
        arm(fd);
    if (rc < 0 && timed_out()) { /* EAGAIN: a full backlog that nobody accepts from */
        say("hookd failed to answer: its socket takes no more connections (the listen "
            "backlog is full: a stopped or wedged daemon?)");
        return fail(fail_closed);
    }
    if (rc < 0) {
        say("hookd is not running: %s (socket %s)", strerror(errno), path);
        return fail(fail_closed);
    }
    if (pid_state == -2) {
        say("hookd failed to answer: integer too large");
        return fail(fail_closed);
    }

    struct buf frames = {0};
    build_frames(&frames, event, input.p, input.len, pid_state == 0, pid);
    if (frames.len - 8 > MAX_FRAME) { /* the environment alone can be large */
        say("hookd failed to answer: request over %u bytes", MAX_FRAME);
        return fail(fail_closed);
    }
    for (size_t sent = 0; sent < frames.len;) {
        ssize_t w = send(fd, frames.p + sent, frames.len - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            arm(fd);
            continue;
        }
        if (w < 0 && timed_out()) {
            say_late();
            return fail(fail_closed);
        }
        if (w < 0) {
            say("hookd failed to answer: [Errno %d] %s", errno,
                     strerror(errno));
            return fail(fail_closed);
        }
        sent += (size_t)w;
    }
    int code = read_reply(fd);
    return code < 0 ? fail(fail_closed) : code;
}
