package jsonscan_test

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// A watch event's members, found without decoding anything.
func Example() {
	frame := []byte(`{"type":"ADDED","object":{"metadata":{"name":"web-1"}}} {"type":...`)
	fmt.Println("the event ends at", jsonscan.ValueEnd(frame, 0))

	j, more := jsonscan.FirstMember(frame, 0)
	for more {
		nameEnd, _, value := jsonscan.Member(frame, j)
		end := jsonscan.ValueEnd(frame, value)
		fmt.Printf("%s: %s\n", frame[j+1:nameEnd-1], frame[value:end])
		j, more = jsonscan.NextMember(frame, end)
	}

	end := jsonscan.EachString(frame, 25, func(start, end int) { // the object's strings
		fmt.Print(string(frame[start:end]), " ")
	})
	fmt.Println("end", end)
	// Output:
	// the event ends at 55
	// type: "ADDED"
	// object: {"metadata":{"name":"web-1"}}
	// "metadata" "name" "web-1" end 54
}
