/*
 * test_pinj.c - the pure parts of ptrace injection on both architectures:
 * call frames (x86-64 and aarch64 register images), trap recognition, and
 * ELF64 reading on a hand-built aarch64 library (planted symbol and brk at
 * known addresses) and on this host's libc (the symbol's offset checked
 * against what the dynamic loader itself resolved).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/pinj.h"

Test(pinj_arch, x86_64_call_frame)
{
	const struct gt_pinj_arch *a = gt_pinj_arch_for(EM_X86_64);
	cr_assert_not_null(a);
	union gt_pinj_regs r;
	memset(&r, 0, sizeof(r));
	r.x86.rsp = 0x7ffff0001238;           /* not 16-aligned, as mid-function */
	r.x86.orig_rax = 0;                   /* stopped in read() */
	r.x86.eflags = 0x446;                 /* DF set */
	uint64_t args[6] = { GT_PINJ_ARG_STR, 2, 3, 4, 5, 6 };
	struct gt_pinj_frame fr;
	gt_pinj_arch_call(a, &r, 0x400000, args, 0x500000, 20, &fr);
	cr_assert_eq(r.x86.rip, 0x400000);
	/* the string below the 128-byte red zone, 16-aligned */
	cr_assert_leq(fr.str_addr + 20, 0x7ffff0001238 - 128);
	cr_assert_eq(fr.str_addr % 16, 0);
	cr_assert_eq(r.x86.rdi, fr.str_addr);
	cr_assert_eq(r.x86.rsi, 2);
	cr_assert_eq(r.x86.rdx, 3);
	cr_assert_eq(r.x86.rcx, 4);
	cr_assert_eq(r.x86.r8, 5);
	cr_assert_eq(r.x86.r9, 6);
	/* as after a call: return address at rsp, rsp + 8 16-aligned */
	cr_assert_eq(fr.ret_slot, r.x86.rsp);
	cr_assert_eq((r.x86.rsp + 8) % 16, 0);
	cr_assert_lt(r.x86.rsp + 8, fr.str_addr + 1);
	cr_assert_eq(fr.lo, r.x86.rsp);
	cr_assert_eq(r.x86.orig_rax, UINT64_MAX, "no syscall restart during the call");
	cr_assert_eq(r.x86.eflags & 0x400, 0);
	cr_assert_eq(r.x86.rax, 0);
	/* int3 reports the byte after it */
	r.x86.rip = 0x500001;
	r.x86.rax = 0xabc;
	cr_assert(gt_pinj_arch_returned(a, &r, 0x500000));
	cr_assert_eq(gt_pinj_arch_ret(a, &r), 0xabc);
	r.x86.rip = 0x500000;
	cr_assert_not(gt_pinj_arch_returned(a, &r, 0x500000));
	uint8_t cc = 0xcc, nop = 0x90;
	cr_assert(gt_pinj_arch_is_trap(a, &cc));
	cr_assert_not(gt_pinj_arch_is_trap(a, &nop));
}

Test(pinj_arch, aarch64_call_frame)
{
	const struct gt_pinj_arch *a = gt_pinj_arch_for(EM_AARCH64);
	cr_assert_not_null(a);
	cr_assert_eq(a->regs_size, 34 * 8);
	union gt_pinj_regs r;
	memset(&r, 0, sizeof(r));
	r.a64.sp = 0xffffc0001230;
	r.a64.pc = 0x1111;
	r.a64.x[30] = 0x2222;
	uint64_t args[6] = { GT_PINJ_ARG_STR, 2, 0, 0, 0, 9 };
	struct gt_pinj_frame fr;
	gt_pinj_arch_call(a, &r, 0x400000, args, 0x500000, 33, &fr);
	cr_assert_eq(r.a64.pc, 0x400000);
	cr_assert_eq(r.a64.x[30], 0x500000, "return address in lr");
	cr_assert_eq(r.a64.x[0], fr.str_addr);
	cr_assert_eq(r.a64.x[1], 2);
	cr_assert_eq(r.a64.x[5], 9);
	cr_assert_eq(fr.ret_slot, 0, "nothing pushed");
	cr_assert_eq(r.a64.sp % 16, 0);
	cr_assert_leq(fr.str_addr + 33, 0xffffc0001230 - 128);
	cr_assert_lt(r.a64.sp, fr.str_addr);
	cr_assert_eq(fr.lo, r.a64.sp);
	/* brk reports its own address */
	r.a64.pc = 0x500000;
	r.a64.x[0] = 77;
	cr_assert(gt_pinj_arch_returned(a, &r, 0x500000));
	cr_assert_eq(gt_pinj_arch_ret(a, &r), 77);
	/* brk #0, brk #0x3e8 (__builtin_trap) are traps; svc #0, nop are not */
	uint8_t brk0[4] = { 0x00, 0x00, 0x20, 0xd4 }, brk1000[4] = { 0x00, 0x7d, 0x20, 0xd4 };
	uint8_t svc[4] = { 0x01, 0x00, 0x00, 0xd4 }, nop[4] = { 0x1f, 0x20, 0x03, 0xd5 };
	cr_assert(gt_pinj_arch_is_trap(a, brk0));
	cr_assert(gt_pinj_arch_is_trap(a, brk1000));
	cr_assert_not(gt_pinj_arch_is_trap(a, svc));
	cr_assert_not(gt_pinj_arch_is_trap(a, nop));
	cr_assert_null(gt_pinj_arch_for(EM_386));
}

/* aarch64, a thread interrupted in a syscall (the kernel has already put
 * pc back on the svc and x0 back to its argument before the ptrace stop,
 * arch/arm64/kernel/signal.c do_signal): the call image is a copy, so the
 * saved image still re-executes the svc with its number (x8) and
 * arguments; the call image keeps the flags (NZCV, DAIF) but clears
 * PSTATE.BTYPE, so a BTI-guarded function entry does not fault */
Test(pinj_arch, aarch64_interrupted_syscall_image)
{
	const struct gt_pinj_arch *a = gt_pinj_arch_for(EM_AARCH64);
	union gt_pinj_regs saved, r;
	memset(&saved, 0, sizeof(saved));
	for (int i = 0; i < 31; i++)
		saved.a64.x[i] = 0x1000 + (uint64_t)i;
	saved.a64.x[8] = 101;                 /* __NR_nanosleep */
	saved.a64.sp = 0xffffc0002000;
	saved.a64.pc = 0x7f0000100c;          /* the svc #0 */
	saved.a64.pstate = 0x60000000u | (3u << 10) | 0x3c0;   /* Z C, BTYPE 11, DAIF */
	r = saved;
	uint64_t args[6] = { GT_PINJ_ARG_STR, 2, 0, 0, 0, 0 };
	struct gt_pinj_frame fr;
	gt_pinj_arch_call(a, &r, 0x400000, args, 0x500000, 40, &fr);
	cr_assert_eq((r.a64.pstate >> 10) & 3, 0, "BTYPE cleared for the call");
	cr_assert_eq(r.a64.pstate & ~(uint64_t)(3u << 10), saved.a64.pstate & ~(uint64_t)(3u << 10),
		     "other PSTATE bits kept");
	for (int i = 6; i < 30; i++)
		cr_assert_eq(r.a64.x[i], saved.a64.x[i], "x%d changed by the call frame", i);
	/* the saved image, put back at detach, re-executes the syscall */
	cr_assert_eq(saved.a64.pc, 0x7f0000100c);
	cr_assert_eq(saved.a64.x[8], 101);
	cr_assert_eq(saved.a64.x[0], 0x1000);
	cr_assert_eq((saved.a64.pstate >> 10) & 3, 3);
	/* x86-64 for comparison: orig_rax says "no syscall to restart" in the
	 * call image only */
	const struct gt_pinj_arch *x = gt_pinj_arch_for(EM_X86_64);
	union gt_pinj_regs xs, xr;
	memset(&xs, 0, sizeof(xs));
	xs.x86.rsp = 0x7ffff0002000;
	xs.x86.orig_rax = 35;                 /* __NR_nanosleep */
	xs.x86.rax = (uint64_t)-516;          /* -ERESTART_RESTARTBLOCK */
	xr = xs;
	gt_pinj_arch_call(x, &xr, 0x400000, args, 0x500000, 40, &fr);
	cr_assert_eq(xr.x86.orig_rax, UINT64_MAX);
	cr_assert_eq(xs.x86.orig_rax, 35);
	cr_assert_eq(xs.x86.rax, (uint64_t)-516);
}

/* a minimal aarch64 shared object: one R+X PT_LOAD at vaddr 0x10000 with
 * code at file offset 0x200 (nop, nop, brk #1000 at +8), a .dynsym with
 * "dlopen" = 0x10204 and an undefined "malloc", and their .dynstr */
static size_t build_a64(uint8_t *f, size_t cap)
{
	memset(f, 0, cap);
	Elf64_Ehdr *h = (Elf64_Ehdr *)(void *)f;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_type = ET_DYN;
	h->e_machine = EM_AARCH64;
	h->e_phoff = 64;
	h->e_phentsize = sizeof(Elf64_Phdr);
	h->e_phnum = 1;
	h->e_shoff = 0x400;
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shnum = 3;
	Elf64_Phdr *p = (Elf64_Phdr *)(void *)(f + 64);
	p->p_type = PT_LOAD;
	p->p_flags = PF_R | PF_X;
	p->p_offset = 0x200;
	p->p_vaddr = 0x10200;
	p->p_filesz = p->p_memsz = 16;
	uint32_t code[4] = { 0xd503201f, 0xd503201f, 0xd4207d00, 0xd503201f };
	memcpy(f + 0x200, code, sizeof(code));
	/* .dynstr at 0x300, .dynsym at 0x340 */
	const char strs[] = "\0malloc\0dlopen\0";
	memcpy(f + 0x300, strs, sizeof(strs));
	Elf64_Sym *sym = (Elf64_Sym *)(void *)(f + 0x340);
	sym[1].st_name = 1;                            /* malloc, undefined */
	sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[2].st_name = 8;                            /* dlopen */
	sym[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[2].st_shndx = 1;
	sym[2].st_value = 0x10204;
	Elf64_Shdr *s = (Elf64_Shdr *)(void *)(f + 0x400);
	s[1].sh_type = SHT_DYNSYM;
	s[1].sh_offset = 0x340;
	s[1].sh_size = 3 * sizeof(Elf64_Sym);
	s[1].sh_entsize = sizeof(Elf64_Sym);
	s[1].sh_link = 2;
	s[2].sh_type = SHT_STRTAB;
	s[2].sh_offset = 0x300;
	s[2].sh_size = sizeof(strs);
	return 0x400 + 3 * sizeof(Elf64_Shdr);
}

Test(pinj_elf, planted_aarch64_library)
{
	static uint8_t f[0x600];
	size_t n = build_a64(f, sizeof(f));
	struct gt_pinj_elf e;
	char err[128];
	cr_assert_eq(gt_pinj_elf_from_mem(&e, f, n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(e.machine, EM_AARCH64);
	cr_assert_eq(e.load_vaddr, 0x10000);
	uint64_t v = 0;
	cr_assert_eq(gt_pinj_elf_sym(&e, "dlopen", &v), 0);
	cr_assert_eq(v, 0x10204);
	cr_assert_eq(gt_pinj_elf_sym(&e, "malloc", &v), -ENOENT, "undefined symbols are not found");
	cr_assert_eq(gt_pinj_elf_sym(&e, "dlope", &v), -ENOENT);
	cr_assert_eq(gt_pinj_elf_find_code(&e, NULL, 4, 4, &v), 0);
	cr_assert_eq(v, 0x10208, "the brk #1000");
	/* cut anywhere: an error or a miss, never a read past the end */
	for (size_t cut = 0; cut < n; cut += 7) {
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, f, cut);
		if (gt_pinj_elf_from_mem(&e, copy, cut, err, sizeof(err)) == 0) {
			gt_pinj_elf_sym(&e, "dlopen", &v);
			gt_pinj_elf_find_code(&e, NULL, 4, 4, &v);
		}
		free(copy);
	}
	f[EI_CLASS] = ELFCLASS32;
	cr_assert_lt(gt_pinj_elf_from_mem(&e, f, n, err, sizeof(err)), 0);
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so.6")) {
		*(struct dl_phdr_info *)data = *info;
		return 1;
	}
	return 0;
}

/* our reading of this host's libc agrees with the loader's */
Test(pinj_elf, host_libc_dlopen_matches_loader)
{
	struct dl_phdr_info libc = { 0 };
	cr_assert(dl_iterate_phdr(find_libc, &libc), "no libc.so.6 in this process");
	struct gt_pinj_elf e;
	char err[256];
	cr_assert_eq(gt_pinj_elf_open(&e, libc.dlpi_name, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(gt_pinj_arch_for(e.machine));
	uint64_t v;
	cr_assert_eq(gt_pinj_elf_sym(&e, "dlopen", &v), 0);
	/* libc's own (not a sanitizer's interceptor): look it up in libc */
	void *lc = dlopen(libc.dlpi_name, RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(lc);
	void *real = dlsym(lc, "dlopen");
	Dl_info di;
	cr_assert(dladdr(real, &di) && strstr(di.dli_fname, "libc.so"),
		  "dlopen is not libc's here (%s)", di.dli_fname);
	dlclose(lc);
	cr_assert_eq(libc.dlpi_addr + v, (uint64_t)(uintptr_t)real);
	/* the trap found is one: read it from memory */
	cr_assert_eq(gt_pinj_elf_find_code(&e, NULL, gt_pinj_arch_for(e.machine)->trap_len,
					gt_pinj_arch_for(e.machine)->trap_align, &v), 0);
	cr_assert(gt_pinj_arch_is_trap(gt_pinj_arch_for(e.machine),
				    (const uint8_t *)(uintptr_t)(libc.dlpi_addr + v)));
	gt_pinj_elf_close(&e);
}

Test(pinj_maps, finds_libc_of_self)
{
	struct gt_pinj_map m;
	cr_assert_eq(gt_pinj_maps_find(getpid(), "libc.so.6", &m), 0);
	cr_assert_eq(m.offset, 0);
	cr_assert(strstr(m.path, "libc.so.6"));
	cr_assert_eq(gt_pinj_maps_find(getpid(), "libnosuchthing.so", &m), -ENOENT);
	cr_assert_eq(gt_pinj_maps_uses_cuda(getpid()), dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) != NULL);
}
