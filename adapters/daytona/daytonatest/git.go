package daytonatest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The toolbox's git routes, as this daemon version serves them: through
// go-git, the library the daemon itself uses, on the sandbox's files, so
// the answers, status codes and error wording are the daemon's. The daemon
// runs as daytona, so what a route writes is daytona's. A repository named
// by a local path (or a file:// URL) is the sandbox's, as it is for the
// daemon inside its sandbox. Routes that newer SDKs call and this version
// lacks (init, reset, restore, remotes, config, credentials) answer the
// daemon's 404 for an unknown route.

// The request bodies, with the daemon's type and field names: its
// validator names them in its messages.
type (
	GitAddRequest struct {
		Path  string   `json:"path" validate:"required"`
		Files []string `json:"files" validate:"required"`
	}
	GitCloneRequest struct {
		URL             string  `json:"url" validate:"required"`
		Path            string  `json:"path" validate:"required"`
		Username        *string `json:"username"`
		Password        *string `json:"password"`
		Branch          *string `json:"branch"`
		CommitID        *string `json:"commit_id"`
		InsecureSkipTLS *bool   `json:"insecure_skip_tls"`
	}
	GitCommitRequest struct {
		Path       string `json:"path" validate:"required"`
		Message    string `json:"message" validate:"required"`
		Author     string `json:"author" validate:"required"`
		Email      string `json:"email" validate:"required"`
		AllowEmpty bool   `json:"allow_empty"`
	}
	GitBranchRequest struct {
		Path string `json:"path" validate:"required"`
		Name string `json:"name" validate:"required"`
	}
	GitDeleteBranchRequest struct {
		Path string `json:"path" validate:"required"`
		Name string `json:"name" validate:"required"`
	}
	GitRepoRequest struct {
		Path     string  `json:"path" validate:"required"`
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	GitCheckoutRequest struct {
		Path   string `json:"path" validate:"required"`
		Branch string `json:"branch" validate:"required"`
	}
)

// bindJSON decodes a route's body into req and checks its required
// fields as the daemon's validator does (a string must not be empty, a
// list must be present); false once it has answered the error, whose
// message is the daemon's wrapping of it: "invalid body request: ", then
// what the route adds (wrap), then the decoder's or validator's words.
func bindJSON(w http.ResponseWriter, r *http.Request, req any, wrap string) bool {
	err := json.NewDecoder(r.Body).Decode(req)
	if err == nil {
		err = validateRequired(req)
	}
	if err != nil {
		toolboxError(w, r, http.StatusBadRequest, "INVALID_REQUEST_BODY", "invalid body request: "+wrap+err.Error())
		return false
	}
	return true
}

// validateRequired reports every required field of *req left unset, in
// the validator's words, one per line.
func validateRequired(req any) error {
	v := reflect.ValueOf(req).Elem()
	var missing []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Tag.Get("validate") != "required" {
			continue
		}
		field := v.Field(i)
		if (field.Kind() == reflect.Slice && field.IsNil()) || (field.Kind() == reflect.String && field.Len() == 0) {
			missing = append(missing, fmt.Sprintf("Key: '%s.%s' Error:Field validation for '%s' failed on the 'required' tag", v.Type().Name(), f.Name, f.Name))
		}
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "\n"))
	}
	return nil
}

// gitError answers err as the daemon classifies a git failure: 401 and
// 403 for refused credentials, 404 for what does not exist, 409 for what
// conflicts, 500 otherwise; this machine's paths read as the sandbox's.
func (sb *sandbox) gitError(w http.ResponseWriter, r *http.Request, err error) {
	msg := sb.seen(err.Error())
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrInvalidAuthMethod):
		toolboxError(w, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized: "+msg)
	case errors.Is(err, transport.ErrAuthorizationFailed):
		toolboxError(w, r, http.StatusForbidden, "FORBIDDEN", "forbidden: "+msg)
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, transport.ErrEmptyRemoteRepository),
		errors.Is(err, git.ErrRepositoryNotExists), errors.Is(err, git.ErrBranchNotFound),
		errors.Is(err, git.ErrRemoteNotFound), errors.Is(err, git.ErrTagNotFound),
		errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, plumbing.ErrObjectNotFound):
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", "not found: "+msg)
	case errors.Is(err, git.ErrNonFastForwardUpdate), errors.Is(err, git.ErrWorktreeNotClean),
		errors.Is(err, git.ErrUnstagedChanges), errors.Is(err, git.ErrRepositoryAlreadyExists),
		errors.Is(err, git.ErrBranchExists), errors.Is(err, git.ErrFastForwardMergeNotPossible):
		toolboxError(w, r, http.StatusConflict, "CONFLICT", "conflict: "+msg)
	default:
		toolboxError(w, r, http.StatusInternalServerError, "INTERNAL_SERVER_ERROR", msg)
	}
}

// seen is msg with this machine's paths to the sandbox's files written as
// the sandbox's own paths.
func (sb *sandbox) seen(msg string) string {
	root, err := sb.space.Path("/")
	if err != nil || root == "/" {
		return msg
	}
	return strings.ReplaceAll(msg, strings.TrimSuffix(root, "/")+"/", "/")
}

// gitQueryPath is a GET route's path parameter; "" once it has answered
// the daemon's 400 for a missing one.
func gitQueryPath(w http.ResponseWriter, r *http.Request) string {
	p := r.URL.Query().Get("path")
	if p == "" {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: path is required")
	}
	return p
}

// openRepo opens the repository at sandbox path p, as go-git's PlainOpen
// does (no search upwards for a .git).
func (sb *sandbox) openRepo(p string) (*git.Repository, string, error) {
	host, err := sb.resolve(p)
	if err != nil {
		return nil, "", err
	}
	repo, err := git.PlainOpen(host)
	return repo, host, err
}

// giveToDaytona gives everything under host that the server made to
// daytona, whom the daemon runs as.
func giveToDaytona(host string) {
	if os.Geteuid() != 0 {
		return
	}
	_ = filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if uid, _, ok := stubproc.Owner(info); ok && uid == os.Geteuid() {
				_ = stubfs.Chown(p, daytona)
			}
		}
		return nil
	})
}

// basicAuth is the daemon's credentials for a remote: both or none.
func basicAuth(username, password *string) *githttp.BasicAuth {
	if username == nil || password == nil {
		return nil
	}
	return &githttp.BasicAuth{Username: *username, Password: *password}
}

// sandboxProtocol is the go-git transport through which a route reaches
// a repository that a local path names in the sandbox: go-git's own server,
// in this process. (git's programs, which go-git runs for a local path,
// would run as the server's user and refuse a repository daytona owns.)
// The scheme is this package's own, so installing it changes nothing for
// any other go-git user in the process.
const sandboxProtocol = "daytonatest-sandbox"

func init() { client.InstallProtocol(sandboxProtocol, server.NewClient(server.DefaultLoader)) }

// hostURL is remote url as this server reaches it: a local path or a
// file:// URL names the sandbox's repository; any other URL is itself.
func (sb *sandbox) hostURL(url string) (string, error) {
	local := strings.TrimPrefix(url, "file://")
	if local == url && (strings.Contains(url, "://") || strings.Contains(url, ":")) {
		return url, nil
	}
	host, err := sb.resolve(local)
	if err != nil {
		return "", err
	}
	return sandboxProtocol + "://" + host, nil
}

// remoteURL is the URL override that makes go-git reach the sandbox's
// own repository when repo's remote is a local one; "" otherwise.
func (sb *sandbox) remoteURL(repo *git.Repository, name string) string {
	remote, err := repo.Remote(name)
	if err != nil || len(remote.Config().URLs) == 0 {
		return ""
	}
	url := remote.Config().URLs[0]
	host, err := sb.hostURL(url)
	if err != nil || host == url {
		return ""
	}
	return host
}

// gitPost is a POST (or DELETE) git route: its body bound into a T, then
// op; success answers status, with op's answer as the body when it has one.
func gitPost[T any](status int, op func(sb *sandbox, req *T) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req T
		if !bindJSON(w, r, &req, "invalid request body: ") {
			return
		}
		gitAnswer(w, r, status, func(sb *sandbox) (any, error) { return op(sb, &req) })
	}
}

// gitGet is a GET git route on the repository its path parameter names.
func gitGet(op func(sb *sandbox, p string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p := gitQueryPath(w, r); p != "" {
			gitAnswer(w, r, http.StatusOK, func(sb *sandbox) (any, error) { return op(sb, p) })
		}
	}
}

// gitAnswer runs op on the request's sandbox and answers its outcome.
func gitAnswer(w http.ResponseWriter, r *http.Request, status int, op func(sb *sandbox) (any, error)) {
	sb := sandboxOf(r)
	body, err := op(sb)
	switch {
	case err != nil:
		sb.gitError(w, r, err)
	case body == nil:
		w.WriteHeader(status)
	default:
		writeJSON(w, status, body)
	}
}

// worktree opens the repository at sandbox path p and its worktree; done
// gives what the route made to daytona.
func (sb *sandbox) worktree(p string) (repo *git.Repository, wt *git.Worktree, done func(), err error) {
	repo, host, err := sb.openRepo(p)
	if err != nil {
		return nil, nil, nil, err
	}
	wt, err = repo.Worktree()
	return repo, wt, func() { giveToDaytona(host) }, err
}

func gitAdd(sb *sandbox, req *GitAddRequest) (any, error) {
	_, wt, done, err := sb.worktree(req.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	for _, f := range req.Files {
		if _, err := wt.Add(f); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func gitCheckout(sb *sandbox, req *GitCheckoutRequest) (any, error) {
	repo, host, err := sb.openRepo(req.Path)
	if err != nil {
		return nil, fmt.Errorf("failed to open repository: %w", err)
	}
	defer giveToDaytona(host)
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("failed to get worktree: %w", err)
	}
	// A branch first, then a commit, as the daemon tries them.
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(req.Branch)}); err != nil {
		if err := wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(req.Branch)}); err != nil {
			return nil, fmt.Errorf("failed to checkout branch or commit '%s': %w", req.Branch, err)
		}
	}
	return nil, nil
}

func gitClone(sb *sandbox, req *GitCloneRequest) (any, error) {
	host, err := sb.resolve(req.Path)
	if err != nil {
		return nil, err
	}
	made := host // what the clone makes: the path and its missing parents
	if top := sb.firstMissing(inside(req.Path)); top != "" {
		if !sb.space.Writable(path.Dir(top), daytona) {
			return nil, fmt.Errorf("mkdir %s: permission denied", top)
		}
		if made, err = sb.resolve(top); err != nil {
			return nil, err
		}
	}
	defer giveToDaytona(made)
	url, err := sb.hostURL(req.URL)
	if err != nil {
		return nil, err
	}
	opts := &git.CloneOptions{URL: url, SingleBranch: true, Auth: basicAuth(req.Username, req.Password),
		InsecureSkipTLS: req.InsecureSkipTLS != nil && *req.InsecureSkipTLS}
	if req.Branch != nil && *req.Branch != "" {
		opts.ReferenceName = plumbing.NewBranchReferenceName(*req.Branch)
	}
	repo, err := git.PlainClone(host, false, opts)
	if err != nil {
		return nil, err
	}
	if url != req.URL { // the origin the sandbox sees is the URL it gave
		cfg, err := repo.Config()
		if err != nil {
			return nil, err
		}
		cfg.Remotes[git.DefaultRemoteName].URLs = []string{req.URL}
		if err := repo.SetConfig(cfg); err != nil {
			return nil, err
		}
	}
	if req.CommitID != nil {
		wt, err := repo.Worktree()
		if err != nil {
			return nil, err
		}
		return nil, wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(*req.CommitID)})
	}
	return nil, nil
}

// firstMissing is the outermost directory on the way to sandbox path p
// that does not exist yet, or "" when p exists.
func (sb *sandbox) firstMissing(p string) string {
	missing := ""
	for ; ; p = path.Dir(p) {
		host, err := sb.resolve(p)
		if err != nil {
			return missing
		}
		if _, err := os.Lstat(host); err == nil || p == "/" {
			return missing
		}
		missing = p
	}
}

func gitCommit(sb *sandbox, req *GitCommitRequest) (any, error) {
	_, wt, done, err := sb.worktree(req.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	hash, err := wt.Commit(req.Message, &git.CommitOptions{
		Author:            &object.Signature{Name: req.Author, Email: req.Email, When: time.Now()},
		AllowEmptyCommits: req.AllowEmpty,
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"hash": hash.String()}, nil
}

func gitCreateBranch(sb *sandbox, req *GitBranchRequest) (any, error) {
	_, wt, done, err := sb.worktree(req.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	return nil, wt.Checkout(&git.CheckoutOptions{Create: true, Branch: plumbing.NewBranchReferenceName(req.Name)})
}

func gitDeleteBranch(sb *sandbox, req *GitDeleteBranchRequest) (any, error) {
	repo, _, err := sb.openRepo(req.Path)
	if err != nil {
		return nil, err
	}
	return nil, repo.Storer.RemoveReference(plumbing.NewBranchReferenceName(req.Name))
}

func gitBranches(sb *sandbox, p string) (any, error) {
	repo, _, err := sb.openRepo(p)
	if err != nil {
		return nil, err
	}
	branches, err := repo.Branches()
	if err != nil {
		return nil, err
	}
	var names []string // null when there is none, as the daemon answers
	err = branches.ForEach(func(ref *plumbing.Reference) error {
		names = append(names, ref.Name().Short())
		return nil
	})
	return map[string]any{"branches": names}, err
}

// commitInfo is one commit of the history route.
type commitInfo struct {
	Hash      string    `json:"hash"`
	Author    string    `json:"author"`
	Email     string    `json:"email"`
	Message   string    `json:"message"`
	Timestamp time.Time `json:"timestamp"`
}

func gitHistory(sb *sandbox, p string) (any, error) {
	repo, _, err := sb.openRepo(p)
	if err != nil {
		return nil, err
	}
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	commits, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return nil, err
	}
	var history []commitInfo
	err = commits.ForEach(func(c *object.Commit) error {
		history = append(history, commitInfo{Hash: c.Hash.String(), Author: c.Author.Name,
			Email: c.Author.Email, Message: c.Message, Timestamp: c.Author.When})
		return nil
	})
	return history, err
}

// fileStatus is one file of the status route.
type fileStatus struct {
	Name     string `json:"name"`
	Extra    string `json:"extra"`
	Staging  string `json:"staging"`
	Worktree string `json:"worktree"`
}

func gitStatus(sb *sandbox, p string) (any, error) {
	repo, wt, _, err := sb.worktree(p)
	if err != nil {
		return nil, err
	}
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	status, err := wt.Status()
	if err != nil {
		return nil, err
	}
	files := []fileStatus{}
	for name, f := range status {
		files = append(files, fileStatus{Name: name, Extra: f.Extra, Staging: statusWord(f.Staging), Worktree: statusWord(f.Worktree)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	ahead, behind, published := sb.aheadBehind(p)
	return map[string]any{"currentBranch": head.Name().Short(), "fileStatus": files,
		"branchPublished": published, "ahead": ahead, "behind": behind}, nil
}

// statusWord is the daemon's word for a go-git status code.
func statusWord(c git.StatusCode) string {
	return map[git.StatusCode]string{
		git.Unmodified: "Unmodified", git.Untracked: "Untracked", git.Modified: "Modified",
		git.Added: "Added", git.Deleted: "Deleted", git.Renamed: "Renamed", git.Copied: "Copied",
		git.UpdatedButUnmerged: "Updated but unmerged",
	}[c]
}

// aheadBehind asks the git program in the sandbox, as daytona, for the
// current branch's upstream and how far HEAD is ahead of and behind it, as
// the daemon does; no upstream (or no git) is 0, 0, false.
func (sb *sandbox) aheadBehind(p string) (ahead, behind int, published bool) {
	dir := inside(p)
	upstream, err := sb.gitProgram("-C", dir, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if err != nil || upstream == "" {
		return 0, 0, false
	}
	counts, err := sb.gitProgram("-C", dir, "rev-list", "--left-right", "--count", upstream+"...HEAD")
	fields := strings.Split(counts, "\t")
	if err != nil || len(fields) != 2 {
		return 0, 0, true
	}
	a, aerr := strconv.Atoi(fields[1])
	b, berr := strconv.Atoi(fields[0])
	if aerr != nil || berr != nil {
		return 0, 0, true
	}
	return a, b, true
}

// gitProgram runs the git program in the sandbox as daytona and answers
// its combined output, trimmed.
func (sb *sandbox) gitProgram(args ...string) (string, error) {
	cmd, err := sb.space.Command("/", daytona, "git", args...)
	if err != nil {
		return "", err
	}
	cmd.Env = sb.daytonaEnv()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func gitPull(sb *sandbox, req *GitRepoRequest) (any, error) {
	repo, wt, done, err := sb.worktree(req.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	err = wt.Pull(&git.PullOptions{RemoteName: git.DefaultRemoteName, Auth: basicAuth(req.Username, req.Password),
		RemoteURL: sb.remoteURL(repo, git.DefaultRemoteName)})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, nil
	}
	return nil, err
}

func gitPush(sb *sandbox, req *GitRepoRequest) (any, error) {
	repo, host, err := sb.openRepo(req.Path)
	if err != nil {
		return nil, err
	}
	defer giveToDaytona(host)
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	remote := sb.remoteURL(repo, git.DefaultRemoteName)
	if remote != "" {
		defer giveToDaytona(strings.TrimPrefix(remote, sandboxProtocol+"://"))
	}
	err = repo.Push(&git.PushOptions{Auth: basicAuth(req.Username, req.Password), RemoteURL: remote,
		RefSpecs: []config.RefSpec{config.RefSpec(fmt.Sprintf("%s:%s", head.Name(), head.Name()))}})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, nil
	}
	return nil, err
}
