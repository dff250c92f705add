package reflector

import (
	"context"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A paginated list asks for each page with the continue token of the one before, so on
// one goroutine the pages take turns: while a page is decoded the server waits, and
// while the server reads the next from storage and sends it the client waits. The apiserver
// writes a page's metadata, which holds the token, before its items; so the reflector asks
// for page n+1 as soon as page n's token is read (listwatch.ListOptions.OnContinue), and
// the two are fetched and decoded at once. It keeps at most two pages in flight, the one
// it will store next and the one after; pages are stored in order, and one abandoned (an
// error before it, a shard change) is cancelled and waited for, never left running.

// pageFetch is one page being listed on a goroutine of its own.
type pageFetch[T any] struct {
	token  chan string // the page's continue token, once read
	done   chan pageResult[T]
	cancel context.CancelFunc
}

type pageResult[T any] struct {
	page *object.List[T]
	err  error
}

// fetchPage starts listing the page opts asks for.
func (r *Reflector[T]) fetchPage(ctx context.Context, opts listwatch.ListOptions) *pageFetch[T] {
	ctx, cancel := context.WithCancel(ctx)
	f := &pageFetch[T]{token: make(chan string, 1), done: make(chan pageResult[T], 1), cancel: cancel}
	opts.OnContinue = func(token string) {
		select {
		case f.token <- token:
		default: // only the first call counts
		}
	}
	go func() {
		page, err := r.lw.List(ctx, opts)
		f.done <- pageResult[T]{page, err}
	}()
	return f
}

// next starts the page after f as soon as f's continue token is known, and returns it
// with the token; or nil and "" when f ends before any token is told (a page without
// one, an error, a source that never calls OnContinue) or the shard is no longer sh, and
// the caller asks for the next page itself once it has looked at this one.
func (r *Reflector[T]) next(ctx context.Context, f *pageFetch[T], opts listwatch.ListOptions, sh *shardState) (*pageFetch[T], string) {
	var token string
	select {
	case token = <-f.token:
	case res := <-f.done:
		f.done <- res // for result
		if res.err != nil {
			return nil, "" // nothing follows a failed page
		}
		select {
		case token = <-f.token: // told just before the end
		default:
			return nil, ""
		}
	}
	// An empty token is no token (a source that told one wrongly): asking with it would
	// list from the start again. Once the shard changed, the list is abandoned after
	// this page.
	if token == "" || r.changed(sh) {
		return nil, ""
	}
	opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = token, "", ""
	return r.fetchPage(ctx, opts), token
}

// result waits for the page.
func (f *pageFetch[T]) result() (*object.List[T], error) {
	res := <-f.done
	f.cancel()
	return res.page, res.err
}

// abandon cancels a page no longer wanted and waits for its goroutine to end.
func (f *pageFetch[T]) abandon() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}
