// Command pbprep writes the stream server's objects in protobuf for its -protobuf-objects
// flag (see package bench/clientgo/pbobjects): given the server's own flags, it makes the
// same objects in-process and writes each one's k8s.io/api protobuf encoding, in list
// order, to -out. Flags that do not shape the objects (-rate, -watch-events, -tls, ...)
// are accepted and ignored, so that the harness can pass the server's flags as they are.
// It refuses the server's lazy mode (-lazy, the default above 200,000 pods), which
// generates its pods as it serves them and serves no protobuf.
//
//	pbprep -out pods.pb -profile pods -objects 10000 -namespace bench [-seed 1] [-managed-fields=false]
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/kinformer/kinformer/bench/clientgo/pbobjects"
	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("pbprep: ")
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("pbprep", flag.ExitOnError)
	out := fs.String("out", "", "file to write (required)")
	var f streamserver.Flags
	f.Register(fs)
	_ = fs.Parse(args)
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *out == "":
		return errors.New("-out is required")
	}
	o := f.Resolve()
	o.ProtobufObjects, o.TLS, o.Logf = "", false, nil // the objects only
	began := time.Now()
	s, err := streamserver.New(o)
	if err != nil {
		return err
	}
	if s.Lazy() {
		return fmt.Errorf("%d %s: the stream server's lazy mode (-lazy, the default above %d pods) serves no protobuf, so has no objects file", s.Len(), o.Profile, streamserver.LazyAbove)
	}
	// Written beside -out and renamed, so that a file at -out is always whole.
	tmp, err := os.CreateTemp(filepath.Dir(*out), filepath.Base(*out)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := pbobjects.Write(tmp, s); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	log.Printf("%d %s in protobuf, %.0f bytes each, written to %s in %v", s.Len(), o.Profile,
		float64(st.Size())/float64(max(s.Len(), 1)), *out, time.Since(began).Round(time.Millisecond))
	return nil
}
