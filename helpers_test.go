package paddock_test

import "net/http"

func httpRequest(url string) (*http.Request, error) { return http.NewRequest(http.MethodGet, url, nil) }
