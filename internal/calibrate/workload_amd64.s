#include "textflag.h"

// func spin(n uint64) uint64
//
// n iterations of: 8 ADDs, each depending on the one before (AX), then
// DEC CX, LEA (which leaves the flags alone) and JNZ. The LEA keeps DEC and
// JNZ apart: adjacent, the two are macro-fused, and AMD's retired
// instructions counter counts a fused pair once where Intel's counts it
// twice. Apart, every core retires 11 instructions per iteration, 1 of them
// a branch; the ADD chain takes 8 cycles (ADD's latency is 1 cycle on every
// x86 core of the last 15 years) while DEC, LEA and JNZ run beside it.
// Returns 8n, the sum the chain built.
TEXT ·spin(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	XORL AX, AX
	XORL DX, DX
	TESTQ CX, CX
	JZ   done
	PCALIGN $64

loop:
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	DECQ CX
	LEAQ 1(DX), DX
	JNZ  loop

done:
	MOVQ AX, ret+8(FP)
	RET
