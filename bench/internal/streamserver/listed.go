package streamserver

import "bufio"

// listed is the objects a list pages through, by position from 0: the eager mode's
// pre-encoded items or a span of the lazy mode's pods. Objects are written as lists
// carry them, at their own resourceVersion with the zero stamp.
type listed interface {
	len() int
	keeps(f *filter, j int) bool
	size(j int, metaOnly bool) int
	write(w *bufio.Writer, j int, metaOnly bool)
}

// eagerObjects are pre-encoded items.
type eagerObjects []item

func (o eagerObjects) len() int                    { return len(o) }
func (o eagerObjects) keeps(f *filter, j int) bool { return f.keeps(&o[j]) }

func (o eagerObjects) size(j int, metaOnly bool) int {
	it := &o[j]
	if metaOnly {
		return it.meta.size(len(it.rvs))
	}
	return it.full.size(len(it.rvs))
}

func (o eagerObjects) write(w *bufio.Writer, j int, metaOnly bool) {
	it := &o[j]
	if metaOnly {
		it.meta.write(w, it.rvs, zeroStamp)
	} else {
		it.full.write(w, it.rvs, zeroStamp)
	}
}

// lazySpan is the lazy pods at positions from to to-1, generated as they are written.
type lazySpan struct {
	l        *lazyPods
	from, to int
	vals     podValues
}

func (s *lazySpan) len() int { return s.to - s.from }

func (s *lazySpan) keeps(f *filter, j int) bool {
	ns, i := s.l.at(s.from + j)
	return s.l.keeps(f, ns, i)
}

func (s *lazySpan) size(j int, metaOnly bool) int {
	ns, i := s.l.at(s.from + j)
	return s.l.size(ns, i, metaOnly)
}

func (s *lazySpan) write(w *bufio.Writer, j int, metaOnly bool) {
	ns, i := s.l.at(s.from + j)
	s.l.fill(&s.vals, ns, i, nil, nil)
	s.l.write(w, &s.vals, i, metaOnly)
}
