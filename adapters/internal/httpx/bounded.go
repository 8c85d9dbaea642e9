package httpx

import (
	"errors"
	"io"
	"net/http"
)

// ErrBudget is a response larger than the byte budget allows.
var ErrBudget = errors.New("response exceeds its byte budget")

// NoRedirects is a CheckRedirect that never follows one: the 3xx answer is
// returned as is.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Budget is a byte allowance shared by the bodies of one operation's
// requests.
type Budget struct{ left int64 }

// NewBudget returns an allowance of n bytes.
func NewBudget(n int64) *Budget { return &Budget{left: n} }

// Read reads a whole body within the budget, spending it; a body over the
// allowance is ErrBudget, and a body cut short (fewer bytes than its
// Content-Length) is an error, never a success.
func (b *Budget) Read(res *http.Response) ([]byte, error) {
	if res.ContentLength > b.left {
		return nil, ErrBudget
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, b.left+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > b.left {
		return nil, ErrBudget
	}
	if res.ContentLength >= 0 && int64(len(data)) != res.ContentLength {
		return nil, io.ErrUnexpectedEOF
	}
	b.left -= int64(len(data))
	return data, nil
}
