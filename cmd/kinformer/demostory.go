package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A chapter of the story: an action, and the state to wait for before the next one.
type chapter struct {
	title string
	do    func(ctx context.Context) error
	until func() (bool, string) // done, and what is still awaited
	hold  time.Duration         // how long the state is shown before going on
}

const demoDeployment = "web"

func tellStory(ctx context.Context, env *demoEnv, v *view) error {
	info, err := env.client.Discover(ctx, "deployments.apps")
	if err != nil {
		return err
	}
	deploys := listwatch.For[*object.Deployment](env.client, info, env.namespace)
	patch := func(ctx context.Context, body string) error {
		_, err := deploys.Patch(ctx, demoDeployment, listwatch.MergePatch, []byte(body), "")
		return err
	}
	chapters := []chapter{
		{title: "create Deployment web: 6 replicas of nginx:1.27", do: func(ctx context.Context) error {
			six := int32(6)
			_, err := deploys.Create(ctx, &object.Deployment{ObjectMeta: object.ObjectMeta{Name: demoDeployment},
				Spec: object.DeploymentSpec{Replicas: &six, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec: []byte(`{"containers":[{"name":"nginx","image":"nginx:1.27"}]}`)}}})
			return err
		}, until: v.rolledOut(6, "nginx:1.27"), hold: time.Second},
		{title: "scale to 10", do: func(ctx context.Context) error { return patch(ctx, `{"spec":{"replicas":10}}`) },
			until: v.rolledOut(10, "nginx:1.27"), hold: time.Second},
		{title: "roll out nginx:1.28", do: func(ctx context.Context) error { return patch(ctx, setImage("nginx:1.28")) },
			until: v.rolledOut(10, "nginx:1.28"), hold: time.Second},
		{title: "roll out nginx:1.29", do: func(ctx context.Context) error { return patch(ctx, setImage("nginx:1.29")) },
			until: v.started("nginx:1.29")},
		{title: "pause halfway (kubectl rollout pause)", do: func(ctx context.Context) error {
			return patch(ctx, `{"spec":{"paused":true}}`)
		}, until: v.pausedCondition(), hold: 3 * time.Second},
		{title: "resume (kubectl rollout resume)", do: func(ctx context.Context) error { return patch(ctx, `{"spec":{"paused":false}}`) },
			until: v.rolledOut(10, "nginx:1.29"), hold: time.Second},
		{title: "roll back (kubectl rollout undo) to nginx:1.28", do: func(ctx context.Context) error {
			return undo(ctx, deploys, v)
		}, until: v.rolledOut(10, "nginx:1.28"), hold: 2 * time.Second},
		deleteChapter(env, deploys, v),
	}
	for i, ch := range chapters {
		v.chapter(i+1, len(chapters), ch.title)
		if err := ch.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", ch.title, err)
		}
		if err := waitUntil(ctx, ch.until); err != nil {
			return fmt.Errorf("%s: %w", ch.title, err)
		}
		v.done()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(ch.hold):
		}
	}
	return nil
}

// deleteChapter deletes the Deployment. With a garbage collector its ReplicaSets and
// pods follow; a bare apiserver has none, and the story says so instead of waiting.
func deleteChapter(env *demoEnv, deploys *listwatch.Resource[*object.Deployment], v *view) chapter {
	ch := chapter{title: "delete Deployment web; ReplicaSets and pods follow", until: v.gone(), hold: time.Second,
		do: func(ctx context.Context) error {
			return deploys.Delete(ctx, demoDeployment, listwatch.DeleteOptions{PropagationPolicy: "Background"})
		}}
	if !env.collects {
		ch.title = "delete Deployment web (no garbage collector here)"
		ch.until = func() (bool, string) {
			_, exists := v.deployment()
			return !exists, "the Deployment to be gone"
		}
	}
	return ch
}

func setImage(image string) string {
	return fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, image)
}

// undo rolls back as `kubectl rollout undo` does: the template of the previous revision's
// ReplicaSet, without its pod-template-hash label, becomes the Deployment's template.
func undo(ctx context.Context, deploys *listwatch.Resource[*object.Deployment], v *view) error {
	current := v.revision()
	prev := v.replicaSetOfRevision(current - 1)
	if prev == nil {
		return fmt.Errorf("no ReplicaSet of revision %d", current-1)
	}
	t := object.DeepCopy(prev.Spec.Template)
	labels := maps.Clone(t.Labels)
	delete(labels, "pod-template-hash")
	t.Labels = labels
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
	if err != nil {
		return err
	}
	_, err = deploys.Patch(ctx, demoDeployment, listwatch.MergePatch, body, "")
	return err
}

// waitUntil polls cond until it holds or ctx ends (the error then says what was awaited).
func waitUntil(ctx context.Context, cond func() (bool, string)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, waiting := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w waiting for %s", errStoryTimeout, waiting)
		case <-tick.C:
		}
	}
}

func revisionOf(m *object.ObjectMeta) int64 {
	n, _ := strconv.ParseInt(m.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return n
}
