//go:build race

package codec

// raceDetector: the test binary was built with -race, whose sync.Pool drops a quarter of
// what is put back at random.
const raceDetector = true
