package e2btest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Template names and tags, as E2B's API serves them for the team's
// templates (those its snapshots made) and the built-in base template,
// which is E2B's, public, and not the team's to tag. Builds are not
// served: their routes answer the unknown route's 404.

// templateRoutes is GET /templates/{first}/{second}: an alias's lookup
// (/templates/aliases/{alias}) or a template's tags
// (/templates/{templateID}/tags); "aliases" is the fixed segment, as the
// API's router takes it.
func (s *Server) templateRoutes(w http.ResponseWriter, r *http.Request, _ []byte) {
	switch first, second := r.PathValue("first"), r.PathValue("second"); {
	case first == "aliases":
		s.templateAlias(w, second)
	case second == "tags":
		s.templateTags(w, first)
	default:
		apiError(w, http.StatusNotFound, "not found")
	}
}

// resolveTemplate resolves a parsed identifier as the API's template
// cache does, answering its refusals: the base template is E2B's (its
// 403 is the route's own words, forbidden), one not found is 404. The
// caller holds s.mu.
func (s *Server) resolveTemplate(w http.ResponseWriter, identifier, forbidden string) *snapshotTemplate {
	if identifier == baseTemplate || identifier == teamSlug+"/"+baseTemplate {
		apiError(w, http.StatusForbidden, forbidden)
		return nil
	}
	t := s.findTemplate(identifier)
	if t == nil {
		apiError(w, http.StatusNotFound, fmt.Sprintf("template '%s' not found", identifier))
	}
	return t
}

// buildTagged is t's build under tag, or nil.
func (t *snapshotTemplate) buildTagged(tag string) *snapshotBuild {
	for _, b := range t.builds {
		if b.tag == tag {
			return b
		}
	}
	return nil
}

// templateAlias is GET /templates/aliases/{alias}: {public, templateID}
// for the team's template of that name (and tag, when one is given);
// 403 for one that is not the team's, which the SDK takes as existing.
func (s *Server) templateAlias(w http.ResponseWriter, alias string) {
	identifier, tag, ok := teamName(w, alias, "Invalid alias format")
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.resolveTemplate(w, identifier, "You don't have access to this template alias")
	if t == nil {
		return
	}
	if strings.Contains(alias, ":") {
		want := defaultTag
		if tag != nil {
			want = *tag
		}
		if t.buildTagged(want) == nil {
			apiError(w, http.StatusNotFound, fmt.Sprintf("tag '%s' does not exist for template '%s'", want, identifier))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"public": false, "templateID": t.id})
}

// templateTags is GET /templates/{templateID}/tags: each tag's latest
// assignment, by tag.
func (s *Server) templateTags(w http.ResponseWriter, ref string) {
	identifier, _, err := parseName(ref)
	if err != nil {
		apiError(w, http.StatusBadRequest, "Invalid template reference: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.resolveTemplate(w, identifier, fmt.Sprintf("You don't have access to sandbox template '%s'", ref))
	if t == nil {
		return
	}
	builds := slices.Clone(t.builds)
	slices.SortFunc(builds, func(a, b *snapshotBuild) int { return strings.Compare(a.tag, b.tag) })
	out := make([]map[string]any, 0, len(builds))
	for _, b := range builds {
		out = append(out, map[string]any{"tag": b.tag, "buildID": b.buildID, "createdAt": b.created.Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, out)
}

// validTags checks and de-duplicates tags as the API does (lower-cased,
// of [a-z0-9-_.], never a UUID), answering its 400 for the first bad one.
func validTags(w http.ResponseWriter, tags []string) ([]string, bool) {
	seen := map[string]bool{}
	for _, tag := range tags {
		clean := strings.ToLower(strings.TrimSpace(tag))
		reason := ""
		switch {
		case !tagPattern.MatchString(clean):
			reason = "invalid tag: " + tag
		case uuid.Validate(clean) == nil:
			reason = "tag cannot be a UUID"
		}
		if reason != "" {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("Invalid tag: invalid tag '%s': %s", tag, reason))
			return nil, false
		}
		seen[clean] = true
	}
	out := make([]string, 0, len(seen))
	for tag := range seen {
		out = append(out, tag)
	}
	slices.Sort(out)
	return out, true
}

// assignTags is POST /templates/tags {target, tags}: each tag now names
// the build the target ("name" or "name:tag") names; 201 with the tags
// and the build's id.
func (s *Server) assignTags(w http.ResponseWriter, _ *http.Request, body []byte) {
	var req struct {
		Target string   `json:"target"`
		Tags   []string `json:"tags"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return
	}
	if len(req.Tags) == 0 {
		apiError(w, http.StatusBadRequest, "At least one tag is required")
		return
	}
	identifier, tag, ok := teamName(w, req.Target, "Invalid target template format")
	if !ok {
		return
	}
	target := defaultTag
	if tag != nil {
		target = *tag
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if identifier == baseTemplate {
		if target != defaultTag {
			apiError(w, http.StatusNotFound, fmt.Sprintf("Template '%s' with tag '%s' not found", req.Target, target))
			return
		}
		apiError(w, http.StatusForbidden, fmt.Sprintf("You don't have access to sandbox template '%s'", identifier))
		return
	}
	t := s.resolveTemplate(w, identifier, "")
	if t == nil {
		return
	}
	from := t.buildTagged(target)
	if from == nil {
		apiError(w, http.StatusNotFound, fmt.Sprintf("Template '%s' with tag '%s' not found", req.Target, target))
		return
	}
	tags, ok := validTags(w, req.Tags)
	if !ok {
		return
	}
	now := time.Now().UTC()
	for _, tag := range tags {
		t.builds = slices.DeleteFunc(t.builds, func(b *snapshotBuild) bool { return b.tag == tag })
		t.builds = append(t.builds, &snapshotBuild{tag: tag, buildID: from.buildID, sandboxID: from.sandboxID, dir: from.dir, created: now})
	}
	writeJSON(w, http.StatusCreated, map[string]any{"tags": tags, "buildID": from.buildID})
}

// removeTags is DELETE /templates/tags {name, tags}: the tags no longer
// name a build (never "default"); 204.
func (s *Server) removeTags(w http.ResponseWriter, _ *http.Request, body []byte) {
	var req struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return
	}
	tags, ok := validTags(w, req.Tags)
	if !ok {
		return
	}
	switch {
	case len(tags) == 0:
		apiError(w, http.StatusBadRequest, "At least one tag is required")
		return
	case slices.Contains(tags, defaultTag):
		apiError(w, http.StatusBadRequest, fmt.Sprintf("Cannot delete the '%s' tag", defaultTag))
		return
	}
	identifier, tag, ok := teamName(w, req.Name, "Invalid template name format")
	if !ok {
		return
	}
	if tag != nil {
		apiError(w, http.StatusBadRequest, "Template name should not contain a tag, use the 'tags' field instead")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.resolveTemplate(w, identifier, fmt.Sprintf("You don't have access to sandbox template '%s'", identifier))
	if t == nil {
		return
	}
	t.builds = slices.DeleteFunc(t.builds, func(b *snapshotBuild) bool { return slices.Contains(tags, b.tag) })
	w.WriteHeader(http.StatusNoContent)
}
