// Package httpx is what the HTTP-based adapters share: the normalisation of
// a provider's HTTP answer to the error taxonomy (docs/contract.md#taxonomy), and
// bounded requests (a byte budget, no redirects, one deadline) for the
// operations whose evidence rules are strict.
package httpx
