package fakekubelet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

// podCIDR is the range pod addresses come from.
const podCIDR = "10.244.0.0/16"

// podBook is what the kubelet knows of the pods on its node beyond what the cache
// shows: when each was bound (to time its start), whether its status has been written
// (so a cache that lags behind the write does not start it twice), and its address.
// Entries are keyed by pod key and belong to one pod uid: a new pod under the same name
// starts afresh. Everything in it can be rebuilt from the pods themselves, which is how
// a restarted kubelet picks up where the last one stopped.
type podBook struct {
	mu    sync.Mutex
	pods  map[string]*podRecord // by pod key
	owner map[netip.Addr]string // address in use → pod key

	// Addresses are handed out in turn from first to last, then again from first
	// (skipping those in use), so a freed address is not reused at once.
	first, last, next netip.Addr
}

type podRecord struct {
	uid     string
	boundAt time.Time
	started bool
	ip      netip.Addr // invalid until the pod has one
}

func newPodBook() *podBook {
	cidr := netip.MustParsePrefix(podCIDR)
	// Neither the network address nor the next one (a real node's gateway), nor the
	// broadcast address.
	first := cidr.Addr().Next().Next()
	a := cidr.Addr().As4()
	broadcast := binary.BigEndian.Uint32(a[:]) | (1<<(32-cidr.Bits()) - 1)
	binary.BigEndian.PutUint32(a[:], broadcast)
	last := netip.AddrFrom4(a).Prev()
	return &podBook{pods: map[string]*podRecord{}, owner: map[netip.Addr]string{}, first: first, last: last, next: first}
}

// recordLocked returns pod's entry, making a new one when there is none for its uid.
// A pod this kubelet did not bind counts as bound when the apiserver marked it
// scheduled, or else now, when it is first seen.
func (b *podBook) recordLocked(pod *object.Pod) *podRecord {
	key := object.Key(pod)
	if r := b.pods[key]; r != nil && r.uid == pod.UID {
		return r
	}
	b.forgetLocked(key)
	r := &podRecord{uid: pod.UID, boundAt: time.Now()}
	if c := pod.Condition("PodScheduled"); c != nil && c.Status() == "True" && !c.LastTransitionTime.IsZero() {
		r.boundAt = c.LastTransitionTime.Time()
	}
	b.pods[key] = r
	return r
}

// observe notes what a pod on the node shows: its address, when it has one, is taken.
func (b *podBook) observe(pod *object.Pod) {
	status, err := statusOf(pod)
	ip, perr := netip.ParseAddr(status.PodIP)
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.recordLocked(pod)
	if err != nil || perr != nil || r.ip == ip {
		return
	}
	if r.ip.IsValid() && b.owner[r.ip] == object.Key(pod) {
		delete(b.owner, r.ip)
	}
	r.ip = ip
	if _, taken := b.owner[ip]; !taken {
		b.owner[ip] = object.Key(pod)
	}
}

// bound records that this kubelet bound pod at t.
func (b *podBook) bound(pod *object.Pod, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recordLocked(pod).boundAt = t
}

// boundAt returns when pod was bound, as well as the kubelet knows.
func (b *podBook) boundAt(pod *object.Pod) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.recordLocked(pod).boundAt
}

func (b *podBook) markStarted(pod *object.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recordLocked(pod).started = true
}

func (b *podBook) started(pod *object.Pod) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.recordLocked(pod).started
}

// address returns pod's address, handing out the next free one of podCIDR if it has
// none yet. The same pod keeps the same address across retries.
func (b *podBook) address(pod *object.Pod) (netip.Addr, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.recordLocked(pod)
	if r.ip.IsValid() {
		return r.ip, nil
	}
	for start := b.next; ; {
		ip := b.next
		if b.next = ip.Next(); ip == b.last {
			b.next = b.first
		}
		if _, taken := b.owner[ip]; !taken {
			r.ip, b.owner[ip] = ip, object.Key(pod)
			return ip, nil
		}
		if b.next == start {
			return netip.Addr{}, fmt.Errorf("no free address left in %s", podCIDR)
		}
	}
}

// forget drops what is known of a pod that is gone, and frees its address.
func (b *podBook) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetLocked(key)
}

func (b *podBook) forgetLocked(key string) {
	r := b.pods[key]
	if r == nil {
		return
	}
	if r.ip.IsValid() && b.owner[r.ip] == key {
		delete(b.owner, r.ip)
	}
	delete(b.pods, key)
}
