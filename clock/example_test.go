package clock_test

import (
	"fmt"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// A Fake clock runs timers only when a test steps it, in the order they fall due.
func ExampleFake() {
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.AfterFunc(2*time.Second, func() { fmt.Println("second timer") })
	c.AfterFunc(time.Second, func() { fmt.Println("first timer") })
	fmt.Println("armed:", c.Pending())
	c.Step(3 * time.Second)
	fmt.Println("now:", c.Now().Format(time.TimeOnly), "armed:", c.Pending())
	// Output:
	// armed: 2
	// first timer
	// second timer
	// now: 00:00:03 armed: 0
}
