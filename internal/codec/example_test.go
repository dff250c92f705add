package codec_test

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/jsonscan"
	"github.com/kinformer/kinformer/object"
)

// A frame is validated once, then decoded without a second check; what the model does not
// name is kept and written back.
func Example() {
	frame := []byte(`{"metadata":{"name":"web-1","namespace":"shop","managedFields":[{"manager":"kubectl"}]},
		"spec":{"nodeName":"node-3","restartPolicy":"Always"},"status":{"phase":"Running"}}`)
	if !jsonscan.Valid(frame) {
		panic("not JSON")
	}
	pod, err := codec.DecodeUnvalidated[*object.Pod](frame, codec.Options{DropManagedFields: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	fmt.Printf("spec keeps: %s\n", pod.Spec.Unknown.Get("restartPolicy"))
	out, _ := codec.Marshal(pod)
	fmt.Println(string(out))
	// Output:
	// shop web-1 node-3 Running
	// spec keeps: "Always"
	// {"metadata":{"name":"web-1","namespace":"shop"},"spec":{"nodeName":"node-3","restartPolicy":"Always"},"status":{"phase":"Running"}}
}
