/*
 * pinj_arch.c - the per-architecture part of ptrace injection
 * (gtrace/pinj.h): register images, the frame of a call made in a stopped
 * thread, and the trap instruction a call returns to.  Pure functions on a
 * register image, so both architectures build and are unit-tested on any
 * host; only gt_pinj_arch_host() depends on the build target.
 *
 * Frame rules (both): the red zone (128 bytes under sp) is left alone;
 * below it the string (16-byte aligned), 64 bytes of room, then the new sp
 * (16-byte aligned).  x86-64 pushes the return address (sp + 8 is 16-byte
 * aligned at entry, as after a call); aarch64 puts it in x30.
 */
#include <elf.h>
#include <string.h>
#include "gtrace/pinj.h"

#define RED_ZONE 128u
#define ALIGN_DOWN(x, a) ((x) & ~(uint64_t)((a) - 1))

static const struct gt_pinj_arch arch_x86_64 = {
	.name = "x86-64", .machine = EM_X86_64, .regs_size = 27 * 8,
	.trap = { 0xcc }, .trap_len = 1, .trap_align = 1, .trap_mask = { 0xff },
};

/* brk #imm16: 0xd4200000 | imm16 << 5, little endian */
static const struct gt_pinj_arch arch_aarch64 = {
	.name = "aarch64", .machine = EM_AARCH64, .regs_size = 34 * 8,
	.trap = { 0x00, 0x00, 0x20, 0xd4 }, .trap_len = 4, .trap_align = 4,
	.trap_mask = { 0x1f, 0x00, 0xe0, 0xff },
};

const struct gt_pinj_arch *gt_pinj_arch_for(uint16_t machine)
{
	if (machine == EM_X86_64)
		return &arch_x86_64;
	if (machine == EM_AARCH64)
		return &arch_aarch64;
	return NULL;
}

const struct gt_pinj_arch *gt_pinj_arch_host(void)
{
#if defined(__x86_64__)
	return &arch_x86_64;
#elif defined(__aarch64__)
	return &arch_aarch64;
#else
	return NULL;
#endif
}

int gt_pinj_arch_is_trap(const struct gt_pinj_arch *a, const uint8_t *p)
{
	for (size_t i = 0; i < a->trap_len; i++)
		if ((p[i] & a->trap_mask[i]) != a->trap[i])
			return 0;
	return 1;
}

void gt_pinj_arch_call(const struct gt_pinj_arch *a, union gt_pinj_regs *r, uint64_t fn,
		    const uint64_t args[6], uint64_t ret_addr, size_t str_len,
		    struct gt_pinj_frame *fr)
{
	int x86 = a->machine == EM_X86_64;
	uint64_t sp = x86 ? r->x86.rsp : r->a64.sp;
	uint64_t top = sp - RED_ZONE;
	uint64_t str = ALIGN_DOWN(top - str_len, 16);
	uint64_t nsp = ALIGN_DOWN(str - 64, 16);
	memset(fr, 0, sizeof(*fr));
	fr->str_addr = str_len ? str : 0;
	uint64_t av[6];
	for (int i = 0; i < 6; i++)
		av[i] = args[i] == GT_PINJ_ARG_STR ? str : args[i];
	if (x86) {
		fr->ret_slot = nsp - 8;
		fr->lo = fr->ret_slot;
		r->x86.rsp = fr->ret_slot;
		r->x86.rip = fn;
		r->x86.rdi = av[0];
		r->x86.rsi = av[1];
		r->x86.rdx = av[2];
		r->x86.rcx = av[3];
		r->x86.r8 = av[4];
		r->x86.r9 = av[5];
		r->x86.rax = 0;                 /* no vector registers for varargs */
		r->x86.orig_rax = UINT64_MAX;   /* not in a syscall: no restart */
		r->x86.eflags &= ~(uint64_t)0x400;   /* DF clear, as the ABI wants */
	} else {
		fr->lo = nsp;
		r->a64.sp = nsp;
		r->a64.pc = fn;
		for (int i = 0; i < 6; i++)
			r->a64.x[i] = av[i];
		r->a64.x[30] = ret_addr;        /* lr */
		/* PSTATE.BTYPE (bits 11:10) as after a plain call: a thread
		 * stopped right after an indirect branch keeps BTYPE != 0, and
		 * a BTI-guarded entry (`bti c`) would fault with SIGILL on 11 */
		r->a64.pstate &= ~(uint64_t)(3u << 10);
	}
}

uint64_t gt_pinj_arch_ret(const struct gt_pinj_arch *a, const union gt_pinj_regs *r)
{
	return a->machine == EM_X86_64 ? r->x86.rax : r->a64.x[0];
}

uint64_t gt_pinj_arch_pc(const struct gt_pinj_arch *a, const union gt_pinj_regs *r)
{
	return a->machine == EM_X86_64 ? r->x86.rip : r->a64.pc;
}

int gt_pinj_arch_returned(const struct gt_pinj_arch *a, const union gt_pinj_regs *r, uint64_t ret_addr)
{
	/* int3 reports the address after it; brk the address of the brk */
	if (a->machine == EM_X86_64)
		return r->x86.rip == ret_addr + 1;
	return r->a64.pc == ret_addr;
}
