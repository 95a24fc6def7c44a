/* drv_blob.S -- embeds build/gpu/drv_kernels.fatbin (found through -Wa,-I<dir>). */
        .section .rodata
        .balign 64
        .globl  ag_fatbin
        .type   ag_fatbin, @object
ag_fatbin:
        .incbin "drv_kernels.fatbin"
        .globl  ag_fatbin_end
ag_fatbin_end:
        .byte   0
        .section .note.GNU-stack,"",@progbits
