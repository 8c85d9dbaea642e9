package daytonatest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// The toolbox's search routes, as the daemon answers them: a missing path
// or pattern is an empty 400; paths in answers are the walked ones, the
// path given joined with each file's place under it.

// walk visits the sandbox's files under p (relative paths are under the
// home) in lexical order, as filepath.Walk does, with each file's path as
// the answer shows it; a directory it cannot read is skipped.
func (sb *sandbox) walk(p string, visit func(shown string, info fs.FileInfo) error) error {
	host, err := sb.resolve(p)
	if err != nil {
		return err
	}
	return filepath.Walk(host, func(at string, info fs.FileInfo, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(host, at)
		if err != nil {
			return nil
		}
		shown := p
		if rel != "." {
			shown = path.Join(p, filepath.ToSlash(rel))
		}
		return visit(shown, info)
	})
}

// findInFiles is GET /files/find?path=&pattern=: each line of each text
// file (no NUL byte in its first 512 bytes) under path that contains the
// pattern, as {file, line, content}.
func (s *Server) findInFiles(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	p, pattern := r.URL.Query().Get("path"), r.URL.Query().Get("pattern")
	if p == "" || pattern == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	type match struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Content string `json:"content"`
	}
	matches := []match{}
	err := sb.walk(p, func(shown string, info fs.FileInfo) error {
		if !info.Mode().IsRegular() {
			return nil
		}
		host, err := sb.resolve(shown)
		if err != nil {
			return nil
		}
		f, err := os.Open(host)
		if err != nil {
			return nil
		}
		defer f.Close()
		head := make([]byte, 512)
		n, err := f.Read(head)
		if err != nil || strings.ContainsRune(string(head[:n]), 0) {
			return nil // empty, unreadable or binary
		}
		if _, err := f.Seek(0, 0); err != nil {
			return nil
		}
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			if strings.Contains(sc.Text(), pattern) {
				matches = append(matches, match{File: shown, Line: line, Content: sc.Text()})
			}
		}
		return nil
	})
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	writeJSON(w, http.StatusOK, matches)
}

// searchFiles is GET /files/search?path=&pattern=: the files under path
// whose place under it matches the glob pattern (*, ** across
// directories, ?, {a,b}, [...]), as {"files": [...]}.
func (s *Server) searchFiles(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	p, pattern := r.URL.Query().Get("path"), r.URL.Query().Get("pattern")
	if p == "" || pattern == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	re, err := glob(pattern)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	files := []string{}
	err = sb.walk(p, func(shown string, info fs.FileInfo) error {
		if info.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(shown, p), "/")
		if re.MatchString(rel) {
			files = append(files, shown)
		}
		return nil
	})
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files})
}

// glob is a doublestar glob pattern as a regular expression over a
// slash-separated path.
func glob(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	braces := 0
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		case ch == '{':
			braces++
			b.WriteString("(?:")
		case ch == '}' && braces > 0:
			braces--
			b.WriteString(")")
		case ch == ',' && braces > 0:
			b.WriteString("|")
		case ch == '[':
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 {
				return nil, &fs.PathError{Op: "glob", Path: pattern, Err: fs.ErrInvalid}
			}
			b.WriteString(strings.Replace(pattern[i:i+end+1], "[!", "[^", 1))
			i += end
		case ch == '\\' && i+1 < len(pattern):
			i++
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	if braces != 0 {
		return nil, &fs.PathError{Op: "glob", Path: pattern, Err: fs.ErrInvalid}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// replaceInFiles is POST /files/replace {files, pattern, newValue}: every
// occurrence of pattern (a plain string) replaced in each file, the file
// written 0644; an answer per file, {file, success, error?}.
func (s *Server) replaceInFiles(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	var req struct {
		Files    []string `json:"files"`
		Pattern  string   `json:"pattern"`
		NewValue *string  `json:"newValue"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Files == nil || req.NewValue == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	type result struct {
		File    string `json:"file"`
		Success bool   `json:"success"`
		Error   string `json:"error,omitempty"`
	}
	results := make([]result, 0, len(req.Files))
	for _, f := range req.Files {
		err := sb.replaceIn(f, req.Pattern, *req.NewValue)
		res := result{File: f, Success: err == nil}
		if err != nil {
			res.Error = err.Error()
		}
		results = append(results, res)
	}
	writeJSON(w, http.StatusOK, results)
}

// replaceIn replaces every occurrence of pattern in the file at p.
func (sb *sandbox) replaceIn(p, pattern, value string) error {
	host, err := sb.resolve(p)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(host)
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: errorOf(err)}
	}
	if err := os.WriteFile(host, []byte(strings.ReplaceAll(string(b), pattern, value)), 0o644); err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: errorOf(err)}
	}
	return nil
}

// errorOf is the system error under err, so a message names the
// sandbox's path rather than this machine's.
func errorOf(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
