package shardgroup

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Members come, leave, die, are cut off (hung or refused) and release slowly, in a random
// order and at random times, all on one group. At every step no namespace has two
// members acting on it and the ledger shows no bucket worked on by two members at once;
// once the faults are lifted, the survivors settle on the assignment among them.
func TestChurn(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SHARDGROUP_CHURN_SEED"); s != "" { // to replay a failure
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (SHARDGROUP_CHURN_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	h := newHarness(t)

	live := map[string]bool{} // running and meant to stay
	hung := map[string]time.Time{}
	refused, refusedUntil := "", time.Time{}
	gates := map[string]func(){}
	gatedUntil := map[string]time.Time{}
	next := 0
	join := func() {
		next++
		id := fmt.Sprintf("m%d", next)
		h.start(id)
		live[id] = true
	}
	pick := func() (string, bool) {
		ids := slices.Sorted(maps.Keys(live))
		if len(ids) < 2 {
			return "", false
		}
		return ids[rng.IntN(len(ids))], true
	}
	for range 3 {
		join()
	}
	counts := map[string]int{}
	events := 24
	if testing.Short() {
		events = 10
	}
	for range events {
		now := h.clk.Now()
		var what string
		switch rng.IntN(6) {
		case 0:
			if len(live) < 6 {
				what = "join"
				join()
			}
		case 1:
			if id, ok := pick(); ok && hung[id].IsZero() && id != refused {
				what = "sigterm"
				delete(live, id)
				h.member(id).cancel() // it leaves while the rest goes on
			}
		case 2:
			if id, ok := pick(); ok && len(live) > 2 {
				what = "kill"
				delete(live, id)
				delete(hung, id)
				h.freeze(id)
			}
		case 3:
			if id, ok := pick(); ok && hung[id].IsZero() {
				what = "hang"
				hung[id] = now.Add(time.Duration(rng.IntN(30)) * time.Second)
				h.cut(id, true)
			}
		case 4:
			if id, ok := pick(); ok && refused == "" {
				what = "refuse"
				refused, refusedUntil = id, now.Add(time.Duration(rng.IntN(30))*time.Second)
				h.partition(id)
			}
		case 5:
			if id, ok := pick(); ok && gates[id] == nil {
				what = "slow release"
				gates[id] = h.led.gate(id)
				gatedUntil[id] = now.Add(time.Duration(rng.IntN(40)) * time.Second)
			}
		}
		if what != "" {
			counts[what]++
		}
		h.advance(time.Duration(rng.IntN(16)) * time.Second)
		now = h.clk.Now()
		for id, until := range hung {
			if !now.Before(until) {
				h.cut(id, false)
				delete(hung, id)
			}
		}
		if refused != "" && !now.Before(refusedUntil) {
			h.heal()
			refused = ""
		}
		for id, until := range gatedUntil {
			if !now.Before(until) {
				gates[id]()
				delete(gates, id)
				delete(gatedUntil, id)
			}
		}
	}
	for id := range hung {
		h.cut(id, false)
	}
	h.heal()
	for _, open := range gates {
		open()
	}
	ids := slices.Sorted(maps.Keys(live))
	took := h.until(3*time.Minute, fmt.Sprintf("%v converged", ids), func() bool { return h.converged(ids...) })
	t.Logf("events %v; %v converged %v after the last fault, at %v", counts, ids, took, h.clk.Now().Sub(epoch))
}
