package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/kindcases"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryKindHasACase(t *testing.T) {
	t.Parallel()
	seen := map[paddock.Kind]bool{}
	for _, c := range kindcases.All() {
		seen[c.Kind] = true
	}
	for _, k := range paddock.Kinds() {
		assert.True(t, seen[k], "kind %s has no test case", k)
	}
	assert.Len(t, paddock.Kinds(), 12, "the taxonomy is closed at twelve kinds")
}

func TestKindsAndTransience(t *testing.T) {
	t.Parallel()
	for _, c := range kindcases.All() {
		wrappers := map[string]error{
			"bare":           c.Err,
			"fmt wrapped":    fmt.Errorf("reading: %w", c.Err),
			"op wrapped":     &paddock.OpError{Op: "get", Provider: "fake", Name: "box", Err: c.Err},
			"double wrapped": fmt.Errorf("outer: %w", &paddock.OpError{Op: "get", Provider: "fake", Err: c.Err}),
		}
		for how, err := range wrappers {
			t.Run(c.Name+"/"+how, func(t *testing.T) {
				assert.Equal(t, c.Kind, paddock.KindOf(err))
				assert.Equal(t, c.Transient, paddock.IsTransient(err))
				assert.Equal(t, c.Transient, c.Kind.Transient())
				assert.ErrorIs(t, err, c.Sentinel)
			})
		}
	}
}

func TestSentinelsAreDistinct(t *testing.T) {
	t.Parallel()
	for _, a := range kindcases.All() {
		for _, b := range kindcases.All() {
			if a.Kind == b.Kind {
				continue
			}
			assert.NotErrorIs(t, a.Err, b.Sentinel, "%s must not match %s", a.Name, b.Kind)
		}
	}
}

func TestIsTransientOutsideTheTaxonomy(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		err  error
		want bool
	}{
		"nil":                      {nil, false},
		"unknown error":            {errors.New("something odd"), true},
		"wrapped unknown error":    {fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true},
		"bare timeout":             {context.DeadlineExceeded, true},
		"unsupported public url":   {paddock.ErrNoPublicURL, false},
		"wrapped unsupported":      {fmt.Errorf("public url: %w", paddock.ErrNoPublicURL), false},
		"unknown provider":         {&paddock.UnknownProviderError{Provider: "nope"}, false},
		"wrapped unknown provider": {fmt.Errorf("x: %w", &paddock.UnknownProviderError{Provider: "nope"}), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, paddock.IsTransient(tc.err))
		})
	}
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(errors.New("x")))
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(paddock.ErrNoPublicURL))
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(nil))
}

func TestDetailSentinels(t *testing.T) {
	t.Parallel()
	cbe := fmt.Errorf("stream: %w", &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit})
	assert.ErrorIs(t, cbe, paddock.ErrClosedBeforeExit)
	assert.ErrorIs(t, cbe, paddock.ErrUnavailable)
	assert.NotErrorIs(t, cbe, paddock.ErrExecTimeout)
	assert.NotErrorIs(t, &paddock.UnavailableError{}, paddock.ErrClosedBeforeExit, "an empty detail matches no detail sentinel")

	timeout := &paddock.ExecTimeoutError{Timeout: 1500 * time.Millisecond}
	assert.ErrorIs(t, timeout, paddock.ErrExecTimeout)
	assert.ErrorIs(t, timeout, paddock.ErrUnavailable)
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, fmt.Errorf("w: %w", timeout), &et)
	assert.Equal(t, 1500*time.Millisecond, et.Timeout, "the original timeout is kept")

	term := &paddock.InvalidError{Detail: paddock.DetailTerminationRequest}
	assert.ErrorIs(t, term, paddock.ErrTerminationRequest)
	assert.NotErrorIs(t, term, paddock.ErrCheckpointOperationID)

	// A detail is its token, or its token with more said after a colon.
	big := &paddock.InvalidError{Detail: paddock.DetailFileTooLarge + ": at most 256 MiB"}
	assert.ErrorIs(t, big, paddock.ErrFileTooLarge)
	assert.NotErrorIs(t, &paddock.InvalidError{Detail: paddock.DetailFileTooLarge + "_other"}, paddock.ErrFileTooLarge, "a longer token is another token")
	assert.NotErrorIs(t, &paddock.InvalidError{Detail: "see " + paddock.DetailFileTooLarge}, paddock.ErrFileTooLarge)
	assert.ErrorIs(t, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit + ": the link closed"}, paddock.ErrClosedBeforeExit)
}

func TestErrorsAsTypedData(t *testing.T) {
	t.Parallel()
	retry := 3 * time.Second
	err := &paddock.OpError{Op: "create", Provider: "sprites", Err: &paddock.RateLimitedError{RetryAfter: &retry}}
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, err, &rl)
	require.NotNil(t, rl.RetryAfter)
	assert.Equal(t, retry, *rl.RetryAfter)

	var pe *paddock.ProviderError
	require.ErrorAs(t, fmt.Errorf("x: %w", &paddock.ProviderError{Provider: "e2b", Detail: "weird"}), &pe)
	assert.Equal(t, paddock.Provider("e2b"), pe.Provider)
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		err  error
		want string
	}{
		"sentinel":         {paddock.ErrNotFound, "not found"},
		"detail":           {&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}, "unavailable: closed_before_exit"},
		"status":           {&paddock.DeniedError{Status: 403, Detail: "forbidden"}, "denied (http 403): forbidden"},
		"op":               {&paddock.OpError{Op: "destroy", Provider: "e2b", Name: "box", Err: paddock.ErrNotFound}, "destroy e2b/box: not found"},
		"op without name":  {&paddock.OpError{Op: "list", Provider: "e2b", Err: paddock.ErrTruncated}, "list e2b: truncated"},
		"exec timeout":     {&paddock.ExecTimeoutError{Timeout: 250 * time.Millisecond}, "unavailable: exec_timeout after 250ms"},
		"unknown provider": {&paddock.UnknownProviderError{Provider: "nope", Configured: []paddock.Provider{"sprites", "e2b"}}, `unknown sandbox provider "nope" (configured: e2b, sprites)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.err.Error()) })
	}
}

// DetailTokens is the one list of the detail tokens: it holds every
// Detail constant errors.go declares, once, and nothing else.
func TestDetailTokensListsEveryDetailConstant(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(gotoken.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != gotoken.CONST {
			continue
		}
		for _, s := range g.Specs {
			for i, n := range s.(*ast.ValueSpec).Names {
				if lit, ok := s.(*ast.ValueSpec).Values[i].(*ast.BasicLit); ok && strings.HasPrefix(n.Name, "Detail") {
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					declared = append(declared, v)
				}
			}
		}
	}
	require.NotEmpty(t, declared)
	assert.ElementsMatch(t, declared, paddock.DetailTokens())
}
