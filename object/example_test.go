package object_test

import (
	"encoding/json"
	"fmt"

	"github.com/kinformer/kinformer/object"
)

func Example() {
	in := `{"metadata":{"name":"web-1","namespace":"prod","labels":{"app":"web","tier":"front"}},
	        "spec":{"nodeName":"node-a","containers":[{"name":"c","image":"nginx"}]}}`
	var pod object.Pod
	if err := json.Unmarshal([]byte(in), &pod); err != nil {
		panic(err)
	}
	sel, err := object.ParseSelector("app=web,tier in (front,back)")
	if err != nil {
		panic(err)
	}
	fmt.Println(object.Key(&pod), pod.Spec.NodeName, sel.Matches(pod.Labels))

	fmt.Println(pod.Spec.Containers[0].Name(), pod.Spec.Containers[0].Image())

	// What the model does not type survives a round trip.
	out, _ := json.Marshal(&pod)
	var back map[string]any
	_ = json.Unmarshal(out, &back)
	fmt.Println(back["spec"].(map[string]any)["containers"])
	// Output:
	// prod/web-1 node-a true
	// c nginx
	// [map[image:nginx name:c]]
}

func ExampleParseSelector_error() {
	_, err := object.ParseSelector("app in web")
	fmt.Println(err)
	// Output: invalid label selector "app in web": at 7: expected '(' to open a value set, found "web"
}
