package jsonscan

// EachString finds the end of the value that starts at data[i], as ValueEnd does, and on
// the way calls visit with the bounds of every string in the value: start is the index
// of its opening quote, end the index just past its closing one. It lets a caller look at
// every string in the pass that finds the value's end: the codec packs the Kubernetes
// API's common member names and values into two-byte codes so, while it finds the end of
// a member it keeps verbatim.
func EachString(data []byte, i int, visit func(start, end int)) int {
	if uint(i) >= uint(len(data)) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := String(data, i)
		if end >= 0 {
			visit(i, end)
		}
		return end
	case '{', '[':
		var s Scanner
		return s.scan(data, i, visit)
	}
	return scalarEnd(data, i)
}
