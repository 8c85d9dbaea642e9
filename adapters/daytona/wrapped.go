package daytona

import (
	"encoding/base64"
	"strings"

	"github.com/paddockhq/paddock"
)

// wrapped decodes the journal of a command run under spawnScript, read in
// arbitrary chunks: the daemon's markers, then a base64 line per read of
// the command's output, and on stdout the bare unknownExitLine. The zero
// value is ready.
type wrapped struct {
	demux   Demux
	lines   [2][]byte // a partial line per stream
	unknown bool      // the wrapper wrote unknownExitLine
}

// Write decodes the next chunk, handing each complete line's output to
// emit in order; with a nil emit it only looks for unknownExitLine.
func (w *wrapped) Write(chunk []byte, emit func(paddock.Event)) error {
	for _, seg := range w.demux.Write(chunk) {
		i, kind := 0, paddock.EventStdout
		if seg.Stream == Stderr {
			i, kind = 1, paddock.EventStderr
		}
		buf := append(w.lines[i], seg.Data...)
		for {
			nl := strings.IndexByte(string(buf), '\n')
			if nl < 0 {
				break
			}
			line := string(buf[:nl])
			buf = buf[nl+1:]
			if i == 0 && line == unknownExitLine {
				w.unknown = true
				continue
			}
			if emit == nil {
				continue
			}
			data, err := base64.StdEncoding.DecodeString(line)
			if err != nil {
				return &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "a journal line the wrapper did not write"}
			}
			if len(data) > 0 {
				emit(paddock.Event{Kind: kind, Data: data})
			}
		}
		w.lines[i] = append([]byte(nil), buf...)
	}
	return nil
}
