#include "textflag.h"

// func spin(n uint64) uint64
//
// n iterations of: 8 ADDs, each depending on the one before (R0), then
// SUB R1 and CBNZ (which reads R1, not the flags). Arm counts architected
// instructions, so every core retires 10 per iteration, 1 of them a branch;
// the ADD chain takes 8 cycles (ADD's latency is 1 cycle on every Cortex-A
// and Neoverse core) while SUB and CBNZ run beside it. Returns 8n.
TEXT ·spin(SB), NOSPLIT, $0-16
	MOVD n+0(FP), R1
	MOVD ZR, R0
	CBZ  R1, done
	PCALIGN $64

loop:
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	ADD  $1, R0, R0
	SUB  $1, R1, R1
	CBNZ R1, loop

done:
	MOVD R0, ret+8(FP)
	RET
