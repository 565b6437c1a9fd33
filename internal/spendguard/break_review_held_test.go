package spendguard

import (
	"testing"
	"time"
)

func TestBreakReviewHeldCases(t *testing.T) {
	flush := simOp{kind: opPreview, a: 0}
	cases := []simCase{
		{name: "grant, replace without status, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opGather}, flush, {kind: opReplace, a: 0}, {kind: opAdmit}}},
		{name: "grant, replace with status, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opGather}, flush, {kind: opReplace, a: 1}, {kind: opAdmit}}},
		{name: "grant, delete budget, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opGather}, flush, {kind: opDeleteBudget}, {kind: opAdmit}}},
		{name: "grant, delete, create, lowered limit, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 1}, {kind: opGather}, flush, {kind: opDeleteBudget}, {kind: opReplace, a: 0}, {kind: opSetRenders, a: 1}, {kind: opAdmit}}},
		{name: "grant, limit lowered, view write fails, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 1}, {kind: opGather}, flush, {kind: opSetRenders, a: 1}, {kind: opFailWrites, a: 3}, {kind: opReconcile}, {kind: opAdmit}}},
		{name: "grant, ledger fails, then succeeds, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opGather}, {kind: opFailLedger, a: 1}, flush, flush, {kind: opAdmit}}},
		{name: "grant, crash, pay", ops: []simOp{{kind: opCreate, a: 100, b: 50}, {kind: opGather}, flush, {kind: opCrash}, {kind: opAdmit}}},
		{name: "grant, seconds removed and re-added, unbounded pay", ops: []simOp{{kind: opCreate, a: 0, b: 500}, {kind: opCreate, a: 0, b: 500}, {kind: opSetSeconds, a: -1}, {kind: opGather, a: 0}, flush, {kind: opAdmit, a: 1}, {kind: opSetSeconds, a: 1200}, {kind: opAdmit, a: 0}}},
		{name: "grant, period weekly to monthly", ops: []simOp{{kind: opSetPeriod, a: weekly}, {kind: opSetRenders, a: 2}, {kind: opCreate, a: 100, b: 50}, {kind: opAdmit}, {kind: opClock, a: fiveDays}, {kind: opClock, a: int64(26 * time.Hour)}, {kind: opCreate, a: 100, b: 50}, {kind: opAdmit}, {kind: opCreate, a: 100, b: 50}, {kind: opGather}, flush, {kind: opSetPeriod, a: monthly}, {kind: opAdmit}, {kind: opCreate, a: 100, b: 50}, {kind: opAdmit}}},
	}
	runSimCases(t, cases)
}
