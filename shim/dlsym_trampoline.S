/* dlsym_trampoline.S -- the exported dlsym on x86-64 (see intercept_dlsym.c).
 *
 * RTLD_DEFAULT (0) and RTLD_NEXT (-1) tail-jump into glibc's dlsym with the
 * caller's return address still on the stack; any other handle goes to the C
 * function ag_dlsym_handle, which may swap the answer for a wrapper.
 */
#if defined(__x86_64__)
        .text
        .globl  dlsym
        .type   dlsym, @function
dlsym:
        .cfi_startproc
        testq   %rdi, %rdi
        jz      1f
        cmpq    $-1, %rdi
        je      1f
        jmp     ag_dlsym_handle
1:      movq    ag_real_dlsym(%rip), %rax
        testq   %rax, %rax
        jz      2f
        jmp     *%rax
2:      pushq   %rdi
        .cfi_adjust_cfa_offset 8
        pushq   %rsi
        .cfi_adjust_cfa_offset 8
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        call    ag_resolve_real_dlsym
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %rsi
        .cfi_adjust_cfa_offset -8
        popq    %rdi
        .cfi_adjust_cfa_offset -8
        jmp     *%rax
        .cfi_endproc
        .size   dlsym, .-dlsym
#endif
        .section .note.GNU-stack,"",@progbits
