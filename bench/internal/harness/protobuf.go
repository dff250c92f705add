package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// servesProtobuf reports whether sc's stream server must speak protobuf: one of its
// engines reads protobuf (client-go-protobuf, kinformer-protobuf, or the floor of the
// protobuf bytes). Every engine of the scenario then runs against the same server, the
// JSON ones still getting JSON.
func (sc Scenario) servesProtobuf() bool {
	return sc.Server != nil && slices.ContainsFunc(sc.Engines, readsProtobuf)
}

// serverArgs are the stream server's flags for sc: its own, and for a scenario that
// serves protobuf, -protobuf-objects with the file of its objects' encodings.
func (r *Runner) serverArgs(ctx context.Context, sc Scenario) ([]string, error) {
	if !sc.servesProtobuf() {
		return sc.Server, nil
	}
	file, err := r.protobufObjects(ctx, sc.Server)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(sc.Server), "-protobuf-objects", file), nil
}

// protobufObjects returns the file of the protobuf encodings of the objects a stream
// server makes with flags, made by pbprep once per distinct flags in a harness run and
// kept in its temporary directory (10k pods take a few seconds, 100k half a minute).
func (r *Runner) protobufObjects(ctx context.Context, flags []string) (string, error) {
	key := strings.Join(flags, "\x00")
	if file, ok := r.pbFiles[key]; ok {
		return file, nil
	}
	sum := sha256.Sum256([]byte(key))
	file := filepath.Join(r.Tmp, "objects-"+hex.EncodeToString(sum[:8])+".pb")
	began := time.Now()
	if _, err := runLines(ctx, 10*time.Minute, r.Bins.PBPrep, append([]string{"-out", file}, flags...)...); err != nil {
		return "", fmt.Errorf("preparing the protobuf objects: %w", err)
	}
	r.logf("protobuf encodings of `%s` prepared in %v", strings.Join(flags, " "), time.Since(began).Round(time.Millisecond))
	if r.pbFiles == nil {
		r.pbFiles = map[string]string{}
	}
	r.pbFiles[key] = file
	return file, nil
}
