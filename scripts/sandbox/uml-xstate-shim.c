/*
 * LD_PRELOAD shim for linux.uml (Debian user-mode-linux 6.1).
 *
 * Problem: UML 6.1 restores the FPU state of its guest processes with
 * ptrace(PTRACE_SETREGSET, pid, NT_X86_XSTATE, {buf, sizeof(struct _xstate)}).
 * The host kernel (arch/x86/kernel/fpu/regset.c: xstateregs_set) rejects any
 * buffer whose size differs from the host's full XSAVE size with EFAULT. On
 * CPUs with large XSAVE areas (AVX-512 + AMX: ~11 KiB) that size is bigger
 * than UML's buffer, so the first guest process dies with
 * "userspace - ptrace set fp regs failed, errno = 14" and the kernel panics.
 *
 * Fix: when UML passes a short NT_X86_XSTATE buffer to SETREGSET, read the
 * tracee's full XSAVE image, overlay UML's (legacy + header + AVX...) prefix
 * and write back a buffer of exactly the size the host kernel wants.
 * Everything else is forwarded unchanged to glibc's ptrace().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static unsigned char full[1 << 16] __attribute__((aligned(64)));

long ptrace(enum __ptrace_request req, ...)
{
	static ptrace_fn real;
	va_list ap;
	pid_t pid;
	void *addr, *data;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);

	if (!real)
		real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");

	if (req == PTRACE_SETREGSET && (unsigned long)addr == NT_X86_XSTATE && data) {
		struct iovec *iov = data;
		long r = real(req, pid, addr, data);
		if (r == 0 || errno != EFAULT || iov->iov_len > sizeof(full))
			return r;
		struct iovec fiov = { full, sizeof(full) };
		if (real(PTRACE_GETREGSET, pid, addr, &fiov) < 0)
			return -1;
		if (fiov.iov_len <= iov->iov_len) {
			errno = EFAULT;
			return -1;
		}
		memcpy(full, iov->iov_base, iov->iov_len);
		return real(req, pid, addr, &fiov);
	}
	return real(req, pid, addr, data);
}
