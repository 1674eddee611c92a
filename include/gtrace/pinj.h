/*
 * gtrace/pinj.h - load libgtrace-inject.so into a running process that was
 * not started under gtrace (ptrace injection).
 *
 * One thread of the target is seized and interrupted (PTRACE_SEIZE +
 * PTRACE_INTERRUPT; the other threads run on), its registers are saved,
 * and two functions are called in it: dlopen(LIB, RTLD_NOW) from the
 * target's glibc, then the library's gtrace_inject_attach(), which starts
 * the control thread and returns at once.  A call returns to a trap
 * instruction already present in the target's libc text (int3 on x86-64,
 * brk on aarch64), so no code is written into the target; the library path
 * and (x86-64) the return address go on the thread's stack below its red
 * zone, and those bytes are put back.  Then the registers are restored (an
 * interrupted system call restarts as if nothing happened) and the thread
 * is detached.  Any failure after the seize restores and detaches too.
 *
 * pinj_arch_* (pinj_arch.c) is the per-architecture part as pure functions
 * on a register image, pinj_elf_* (pinj_elf.c) reads symbols and code bytes
 * from ELF64 files, pinj_maps_* (pinj_maps.c) reads /proc/PID/maps.
 */
#ifndef GTRACE_PINJ_H
#define GTRACE_PINJ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GT_PINJ_ENTRY "gtrace_inject_attach"          /* exported by the library */
#define GT_PINJ_IDENT "gtrace-inject-version="         /* + version, in its .rodata */

/* what gt_pinj_inject returns (negated) besides plain errnos */
enum gt_pinj_error {
	GT_PINJ_EPERM = 1,      /* ptrace not permitted (scope, other user, capability) */
	GT_PINJ_ETRACED,        /* already traced by another process (a debugger) */
	GT_PINJ_ENOPROC,        /* no such process */
	GT_PINJ_ENOGLIBC,       /* no libc.so.6 mapped: static or another C library */
	GT_PINJ_EVERSION,       /* a library of another gtrace version is loaded */
	GT_PINJ_ECONTAINER,     /* another mount/network/pid namespace */
	GT_PINJ_EEXITED,        /* the target exited during the injection */
	GT_PINJ_ECALL,          /* dlopen or the entry failed in the target */
	GT_PINJ_EIO,            /* reading/writing the target or an ELF failed */
	GT_PINJ_EARCH,          /* an architecture this build cannot inject into */
	GT_PINJ_ESTOPPED,       /* the process is stopped (SIGSTOP) */
	GT_PINJ_ENOCUDA,        /* GT_PINJ_F_NEED_CUDA and the process maps no CUDA driver */
};

/* pinj_opts.flags */
#define GT_PINJ_F_NEED_CUDA 0x1u   /* refuse, before any ptrace, a process mapping no libcuda.so */

struct gt_pinj_opts {
	uint32_t flags;                  /* PINJ_F_* */
	const char *lib_path;            /* absolute path of libgtrace-inject.so */
	const char *version;             /* this gtrace's version (GTRACE_VERSION) */
	int timeout_ms;                  /* per remote call; 0 = 10000 */
	/* test hook (may be NULL): called while the chosen thread is stopped,
	 * before the first call */
	void (*on_stopped)(void *ctx, pid_t tid);
	void *hook_ctx;
};

struct gt_pinj_result {
	pid_t tid;                       /* the thread that made the calls */
	int already;                     /* the library was loaded already (no ptrace) */
	int64_t total_ns;                /* whole gt_pinj_inject */
	int64_t stopped_ns;              /* interrupt to detach of that thread */
};

/* load opts->lib_path into pid and call its entry; 0 (res filled) or
 * -PINJ_* / negative errno with one line in err that names the process,
 * the problem and the way out.  The target is never left stopped.  While
 * its thread is borrowed, SIGINT, SIGTERM, SIGHUP and SIGQUIT are held in
 * the calling thread (delivered after). */
int gt_pinj_inject(pid_t pid, const struct gt_pinj_opts *opts, struct gt_pinj_result *res,
		char *err, size_t errlen);

/* ---- /proc/PID/maps (pinj_maps.c) ---- */

struct gt_pinj_map {
	uint64_t start, end, offset;
	uint64_t dev_major, dev_minor, ino;
	char perms[5];
	char path[512];
};

/* the mapping of pid with the lowest file offset whose file's base name
 * starts with `base` (e.g. "libc.so.6", "libcuda.so"); 0 or -ENOENT, or
 * negative errno when the maps cannot be read */
int gt_pinj_maps_find(pid_t pid, const char *base, struct gt_pinj_map *out);
/* 1 when pid maps a CUDA driver (libcuda.so*), 0 when not, negative errno */
int gt_pinj_maps_uses_cuda(pid_t pid);

/* ---- ELF64 files (pinj_elf.c) ---- */

struct gt_pinj_elf {
	uint8_t *data;
	size_t size;
	uint16_t machine;                /* EM_X86_64, EM_AARCH64 */
	uint64_t load_vaddr;             /* page-aligned vaddr of the first PT_LOAD */
};

/* read an ELF64 little-endian file; 0 or negative errno with err */
int gt_pinj_elf_open(struct gt_pinj_elf *e, const char *path, char *err, size_t errlen);
/* the same from an 8-byte-aligned buffer the caller keeps alive (tests) */
int gt_pinj_elf_from_mem(struct gt_pinj_elf *e, const void *data, size_t size, char *err, size_t errlen);
void gt_pinj_elf_close(struct gt_pinj_elf *e);
/* vaddr of the defined dynamic symbol `name` (any version); 0 or -ENOENT */
int gt_pinj_elf_sym(const struct gt_pinj_elf *e, const char *name, uint64_t *vaddr);
/* vaddr of the first occurrence of `pat` (len bytes, at a multiple of
 * align) inside an executable PT_LOAD; pat NULL: the file's architecture's
 * trap instruction (gt_pinj_arch_is_trap); 0 or -ENOENT */
int gt_pinj_elf_find_code(const struct gt_pinj_elf *e, const void *pat, size_t len, size_t align,
		       uint64_t *vaddr);
/* 1 when the file holds `needle` anywhere (len bytes) */
int gt_pinj_elf_has_bytes(const struct gt_pinj_elf *e, const void *needle, size_t len);

/* ---- per architecture (pinj_arch.c) ---- */

/* a register image as PTRACE_GETREGSET NT_PRSTATUS returns it: x86-64's
 * struct user_regs_struct (27 words) or aarch64's user_pt_regs (34) */
union gt_pinj_regs {
	uint64_t w[34];
	struct {
		uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx,
			 rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss, fs_base, gs_base,
			 ds, es, fs, gs;
	} x86;
	struct {
		uint64_t x[31], sp, pc, pstate;
	} a64;
};

struct gt_pinj_arch {
	const char *name;
	uint16_t machine;                /* ELF e_machine */
	size_t regs_size;                /* bytes of the NT_PRSTATUS image */
	uint8_t trap[4];                 /* an instruction that raises SIGTRAP */
	size_t trap_len, trap_align;     /* bytes compared, alignment */
	uint8_t trap_mask[4];            /* bits of trap that must match */
};

/* the description for an ELF machine, or NULL */
const struct gt_pinj_arch *gt_pinj_arch_for(uint16_t machine);
/* the architecture gtrace was built for, or NULL (no injection) */
const struct gt_pinj_arch *gt_pinj_arch_host(void);

/* a frame for a call made in the stopped thread: where to write, what */
struct gt_pinj_frame {
	uint64_t lo;                     /* lowest stack byte written */
	uint64_t str_addr;               /* where the string goes */
	uint64_t ret_slot;               /* where the return address goes, or 0 */
};

/* lay out a call of fn(args[0..5]) returning to ret_addr on the stack of
 * r, with a string of str_len bytes (NUL included) copied below the red
 * zone; r is changed in place (pc, sp, argument registers, no syscall
 * restart); fr says what to write.  args[0] may be GT_PINJ_ARG_STR (the
 * string's address). */
#define GT_PINJ_ARG_STR UINT64_MAX
void gt_pinj_arch_call(const struct gt_pinj_arch *a, union gt_pinj_regs *r, uint64_t fn,
		    const uint64_t args[6], uint64_t ret_addr, size_t str_len,
		    struct gt_pinj_frame *fr);
/* the call's return value from the registers at the trap */
uint64_t gt_pinj_arch_ret(const struct gt_pinj_arch *a, const union gt_pinj_regs *r);
/* the program counter */
uint64_t gt_pinj_arch_pc(const struct gt_pinj_arch *a, const union gt_pinj_regs *r);
/* 1 when pc (at the trap's SIGTRAP) says the call returned to ret_addr */
int gt_pinj_arch_returned(const struct gt_pinj_arch *a, const union gt_pinj_regs *r, uint64_t ret_addr);
/* 1 when the bytes at p (trap_len) are this architecture's trap */
int gt_pinj_arch_is_trap(const struct gt_pinj_arch *a, const uint8_t *p);

#endif
