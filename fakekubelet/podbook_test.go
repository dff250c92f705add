package fakekubelet

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

func podNamed(name, uid, podIP string) *object.Pod {
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
	if podIP != "" {
		p.Status.Unknown.Set("podIP", json.RawMessage(`"`+podIP+`"`))
	}
	return p
}

func TestPodAddresses(t *testing.T) {
	b := newPodBook()
	var got []string
	give := func(p *object.Pod) {
		t.Helper()
		ip, err := b.address(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip.String())
	}
	a, bb := podNamed("a", "1", ""), podNamed("b", "2", "")
	give(a)
	give(a) // the same pod keeps its address
	b.observe(podNamed("seen", "3", "10.244.0.3"))
	give(bb) // .3 is taken by a pod started earlier
	b.forget("ns/a")
	give(podNamed("c", "4", "")) // .2 is free again, but handing out goes on in turn
	give(podNamed("b", "5", "")) // a new pod under b's name gets a new address
	b.next = b.last
	give(podNamed("d", "6", ""))
	give(podNamed("e", "7", "")) // wraps around to the first free address
	want := []string{"10.244.0.2", "10.244.0.2", "10.244.0.4", "10.244.0.5", "10.244.0.6", "10.244.255.254", "10.244.0.2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("addresses (-want +got):\n%s", d)
	}
}

func TestPodAddressesRunOut(t *testing.T) {
	b := newPodBook()
	b.first, b.last, b.next = netip.MustParseAddr("10.244.0.2"), netip.MustParseAddr("10.244.0.3"), netip.MustParseAddr("10.244.0.2")
	for _, name := range []string{"a", "b"} {
		if _, err := b.address(podNamed(name, name, "")); err != nil {
			t.Fatal(err)
		}
	}
	if ip, err := b.address(podNamed("c", "c", "")); err == nil {
		t.Errorf("a third address from two: %v", ip)
	}
}
