//go:build !race

package codec

// raceDetector: the test binary was built with -race (see race_on_test.go).
const raceDetector = false
