package streamserver

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// The kubelet variants in protobuf.

// pbSpot is where a value is in a message: its bytes' offset and length.
type pbSpot struct{ at, n int }

// pbKubelet is where a realistic pod's message has the values of its kubeletState.
type pbKubelet struct {
	updated pbSpot   // the kubelet's managedFields time's seconds (n 0: no managedFields)
	ready   []pbSpot // the Ready and ContainersReady conditions' lastTransitionTime's seconds
	ctrs    []pbCtr  // by containerStatuses
}

// pbCtr is where a containerStatus has its values: restartCount, the running state's
// startedAt seconds, the hex of containerID, and the last termination's startedAt and
// finishedAt seconds and containerID hex (n 0: no last termination).
type pbCtr struct {
	restarts, started, id             pbSpot
	lastStarted, lastFinished, lastID pbSpot
}

// pbWalk calls fn for each field of msg (which starts at offset base of the whole
// message): for a varint its value, offset and length, for a length-delimited field its
// bytes and their offset.
func pbWalk(msg []byte, base int, fn func(num int, val []byte, v uint64, at, n int) error) error {
	for i := 0; i < len(msg); {
		key, n, err := readVarint(msg[i:])
		if err != nil {
			return err
		}
		i += n
		num, wt := int(key>>3), int(key&7)
		switch wt {
		case wireVarint:
			v, n, err := readVarint(msg[i:])
			if err != nil {
				return err
			}
			if err := fn(num, nil, v, base+i, n); err != nil {
				return err
			}
			i += n
		case wireBytes:
			l, n, err := readVarint(msg[i:])
			if err != nil || l > uint64(len(msg)-i-n) {
				return fmt.Errorf("field %d: truncated", num)
			}
			i += n
			if err := fn(num, msg[i:i+int(l)], 0, base+i, int(l)); err != nil {
				return err
			}
			i += int(l)
		case wire64:
			i += 8
		case wire32:
			i += 4
		default:
			return fmt.Errorf("field %d: wire type %d", num, wt)
		}
	}
	return nil
}

// pbEach calls fn for every field num of msg (at base).
func pbEach(msg []byte, base, num int, fn func(val []byte, v uint64, at, n int) error) error {
	return pbWalk(msg, base, func(f int, val []byte, v uint64, at, n int) error {
		if f != num {
			return nil
		}
		return fn(val, v, at, n)
	})
}

// pbSeconds finds the seconds of a metav1.Time message, relative to epoch.
func pbSeconds(msg []byte, base int) (int64, pbSpot, error) {
	var sec int64
	var spot pbSpot
	err := pbEach(msg, base, 1, func(_ []byte, v uint64, at, n int) error {
		sec, spot = int64(v)-epoch.Unix(), pbSpot{at, n}
		return nil
	})
	if err == nil && spot.n == 0 {
		err = errors.New("a time without seconds")
	}
	return sec, spot, err
}

const containerdPrefix = "containerd://"

// pbContainerID finds the hex of a containerID string.
func pbContainerID(val []byte, at int) (string, pbSpot, error) {
	hex, ok := bytes.CutPrefix(val, []byte(containerdPrefix))
	if !ok || len(hex) != 64 {
		return "", pbSpot{}, fmt.Errorf("containerID %q", val)
	}
	return string(hex), pbSpot{at + len(containerdPrefix), 64}, nil
}

// pbNameAndTime reads a message's string field 1 and the seconds of its time field 4 (a
// managedFields entry's manager and time, a condition's type and lastTransitionTime),
// with where those seconds are; found says whether field 4 was there.
func pbNameAndTime(msg []byte, at int) (name string, sec int64, spot pbSpot, found bool, err error) {
	err = pbWalk(msg, at, func(num int, val []byte, _ uint64, at, _ int) error {
		var err error
		switch num {
		case 1:
			name = string(val)
		case 4:
			sec, spot, err = pbSeconds(val, at)
			found = true
		}
		return err
	})
	return name, sec, spot, found, err
}

// readKubelet reads a realistic pod's message (Pod: metadata 1, status 3) for its
// kubeletState and where each of its values is.
func readKubelet(msg []byte) (kubeletState, pbKubelet, error) {
	var ks kubeletState
	var loc pbKubelet
	err := pbWalk(msg, 0, func(num int, val []byte, _ uint64, at, _ int) error {
		switch num {
		case 1: // ObjectMeta: managedFields 17, each {manager 1, time 4}
			return pbEach(val, at, 17, func(entry []byte, _ uint64, at, _ int) error {
				manager, sec, spot, found, err := pbNameAndTime(entry, at)
				if err == nil && manager == "kubelet" && found {
					ks.updatedAt, loc.updated = sec, spot
				}
				return err
			})
		case 3: // PodStatus: conditions 2, containerStatuses 8
			return pbWalk(val, at, func(num int, val []byte, _ uint64, at, _ int) error {
				switch num {
				case 2: // PodCondition: type 1, lastTransitionTime 4
					typ, sec, spot, _, err := pbNameAndTime(val, at)
					if err == nil && (typ == "Ready" || typ == "ContainersReady") {
						ks.readyAt = sec
						loc.ready = append(loc.ready, spot)
					}
					return err
				case 8:
					cs, c, err := readContainerStatus(val, at)
					ks.ctrs = append(ks.ctrs, cs)
					loc.ctrs = append(loc.ctrs, c)
					return err
				}
				return nil
			})
		}
		return nil
	})
	switch {
	case err != nil:
	case len(loc.ready) != 2:
		err = fmt.Errorf("%d Ready and ContainersReady conditions, want 2", len(loc.ready))
	case len(ks.ctrs) == 0:
		err = errors.New("no containerStatuses")
	}
	return ks, loc, err
}

// readContainerStatus reads a ContainerStatus (state 2 and lastState 3, ContainerStates
// {running 2 {startedAt 1}, terminated 3 {exitCode 1, reason 3, startedAt 5, finishedAt 6,
// containerID 7}}; restartCount 5, containerID 8).
func readContainerStatus(msg []byte, base int) (ctrState, pbCtr, error) {
	var cs ctrState
	var c pbCtr
	err := pbWalk(msg, base, func(num int, val []byte, v uint64, at, n int) error {
		switch num {
		case 2:
			return pbEach(val, at, 2, func(running []byte, _ uint64, at, _ int) error {
				return pbEach(running, at, 1, func(t []byte, _ uint64, at, _ int) error {
					var err error
					cs.startedAt, c.started, err = pbSeconds(t, at)
					return err
				})
			})
		case 3:
			return pbEach(val, at, 3, func(term []byte, _ uint64, at, _ int) error {
				cs.last = &termState{}
				return pbWalk(term, at, func(num int, val []byte, v uint64, at, _ int) error {
					var err error
					switch num {
					case 1:
						cs.last.exitCode = int(v)
					case 3:
						cs.last.reason = string(val)
					case 5:
						cs.last.startedAt, c.lastStarted, err = pbSeconds(val, at)
					case 6:
						cs.last.finishedAt, c.lastFinished, err = pbSeconds(val, at)
					case 7:
						cs.last.id, c.lastID, err = pbContainerID(val, at)
					}
					return err
				})
			})
		case 5:
			cs.restarts, c.restarts = int(v), pbSpot{at, n}
		case 8:
			var err error
			cs.id, c.id, err = pbContainerID(val, at)
			return err
		}
		return nil
	})
	if err == nil && (c.started.n == 0 || c.id.n == 0 || c.restarts.n == 0) {
		err = errors.New("a containerStatus without its running state, containerID or restartCount")
	}
	return cs, c, err
}

// loadProtobuf sets the pod's protobuf variants from msg, its message as listed, whose
// template is it.pb: the values of its kubeletState that each variant changes, patched
// in place.
func (kv *podVariants) loadProtobuf(msg []byte, it *item) error {
	ks, loc, err := readKubelet(msg)
	if err != nil {
		return fmt.Errorf("kubelet fields: %w", err)
	}
	// toBuf is the offset in it.pb.buf of offset at of msg, which has the holes' bytes.
	toBuf := func(at int) int {
		cut := 0
		for h, hat := range it.pb.at {
			width := stampWidth
			if it.pb.kinds[h] == holeRV {
				width = len(it.rvs)
			}
			if hat+cut < at {
				cut += width
			}
		}
		return at - cut
	}
	type change struct {
		at  int
		val []byte
	}
	for v := range kubeletVariants {
		vs := ks.variant(it.uidHash, v+1)
		var changes []change
		var bad error
		varint := func(spot pbSpot, old, new uint64) {
			if old == new || spot.n == 0 {
				return
			}
			b := appendVarint(nil, new)
			if len(b) != spot.n {
				bad = fmt.Errorf("variant %d: a varint of %d bytes becomes %d", v, spot.n, len(b))
			}
			changes = append(changes, change{spot.at, b})
		}
		secs := func(spot pbSpot, old, new int64) {
			varint(spot, uint64(old+epoch.Unix()), uint64(new+epoch.Unix()))
		}
		hex := func(spot pbSpot, old, new string) {
			if old != new {
				changes = append(changes, change{spot.at, []byte(new)})
			}
		}
		secs(loc.updated, ks.updatedAt, vs.updatedAt)
		for _, r := range loc.ready {
			secs(r, ks.readyAt, vs.readyAt)
		}
		if len(vs.ctrs) != len(loc.ctrs) {
			return fmt.Errorf("variant %d: %d containers, %d in the message", v, len(vs.ctrs), len(loc.ctrs))
		}
		for j, c := range loc.ctrs {
			b, n := &ks.ctrs[j], &vs.ctrs[j]
			varint(c.restarts, uint64(b.restarts), uint64(n.restarts))
			secs(c.started, b.startedAt, n.startedAt)
			hex(c.id, b.id, n.id)
			if (b.last == nil) != (n.last == nil) {
				return fmt.Errorf("variant %d: container %d's last state appears or goes", v, j)
			}
			if b.last != nil {
				secs(c.lastStarted, b.last.startedAt, n.last.startedAt)
				secs(c.lastFinished, b.last.finishedAt, n.last.finishedAt)
				hex(c.lastID, b.last.id, n.last.id)
			}
		}
		if bad != nil {
			return bad
		}
		slices.SortFunc(changes, func(a, b change) int { return a.at - b.at })
		spans := make([]patchSpan, len(changes))
		var data []byte
		for i, ch := range changes {
			spans[i] = patchSpan{uint32(toBuf(ch.at)), uint32(len(ch.val))}
			data = append(data, ch.val...)
		}
		kv.pb.spans[v], kv.pb.data[v] = spans, data
	}
	return nil
}
