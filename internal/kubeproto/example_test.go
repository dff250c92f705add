package kubeproto_test

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// A list body is an envelope around a List message whose items are the objects' bare
// messages; a decoder for the item type takes it from there.
func Example() {
	count := int64(1)
	list := kubeproto.AppendList(nil,
		object.ListMeta{ResourceVersion: "12345", Continue: "next", RemainingItemCount: &count},
		[][]byte{[]byte("pod-a message"), []byte("pod-b message")})
	body := kubeproto.AppendEnvelope(nil, kubeproto.Envelope{APIVersion: "v1", Kind: "PodList", Raw: list})

	e, err := kubeproto.ParseEnvelope(body)
	if err != nil {
		panic(err)
	}
	meta, err := kubeproto.ParseList(e.Raw, func(obj []byte) error {
		fmt.Printf("item: %q\n", obj)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s: resourceVersion %s, continue %q, %d more\n",
		e.APIVersion, e.Kind, meta.ResourceVersion, meta.Continue, *meta.RemainingItemCount)

	// Output:
	// item: "pod-a message"
	// item: "pod-b message"
	// v1 PodList: resourceVersion 12345, continue "next", 1 more
}
