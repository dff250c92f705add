package expectations_test

import (
	"fmt"

	"github.com/kinformer/kinformer/controllers/expectations"
)

// A sync creates two pods; until the informer shows both, the next sync must not act.
func Example() {
	exp := expectations.New(0, nil)
	exp.ExpectCreations("default/web", 2)
	fmt.Println("act now?", exp.Satisfied("default/web"))
	exp.CreationObserved("default/web") // the pod informer delivered the first pod
	exp.CreationObserved("default/web") // the second create failed: it never will be observed
	fmt.Println("act now?", exp.Satisfied("default/web"))
	// Output:
	// act now? false
	// act now? true
}
