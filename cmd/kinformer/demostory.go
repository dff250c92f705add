package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// demoDeployment is the name of the story's Deployment.
const demoDeployment = "web"

// progress is told of each chapter as it begins and ends (the view).
type progress interface {
	chapter(n, of int, title string)
	done()
}

func tellStory(ctx context.Context, env *demoEnv, caches *demoCaches, p progress) error {
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
		{title: "create Deployment " + demoDeployment + ": 6 replicas of nginx:1.27", do: func(ctx context.Context) error {
			six := int32(6)
			_, err := deploys.Create(ctx, &object.Deployment{ObjectMeta: object.ObjectMeta{Name: demoDeployment},
				Spec: object.DeploymentSpec{Replicas: &six, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": demoDeployment}},
					Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": demoDeployment}},
						Spec: object.MustPodSpec(`{"containers":[{"name":"nginx","image":"nginx:1.27"}]}`)}}})
			return err
		}, until: rolledOut(caches, 6, "nginx:1.27"), hold: time.Second},
		{title: "scale to 10", do: func(ctx context.Context) error { return patch(ctx, `{"spec":{"replicas":10}}`) },
			until: rolledOut(caches, 10, "nginx:1.27"), hold: time.Second},
		{title: "roll out nginx:1.28", do: func(ctx context.Context) error { return patch(ctx, setImage("nginx:1.28")) },
			until: rolledOut(caches, 10, "nginx:1.28"), hold: time.Second},
		{title: "roll out nginx:1.29", do: func(ctx context.Context) error { return patch(ctx, setImage("nginx:1.29")) },
			until: started(caches, "nginx:1.29")},
		{title: "pause halfway (kubectl rollout pause)", do: func(ctx context.Context) error {
			return patch(ctx, `{"spec":{"paused":true}}`)
		}, until: pausedCondition(caches), hold: 3 * time.Second},
		{title: "resume (kubectl rollout resume)", do: func(ctx context.Context) error { return patch(ctx, `{"spec":{"paused":false}}`) },
			until: rolledOut(caches, 10, "nginx:1.29"), hold: time.Second},
		{title: "roll back (kubectl rollout undo) to nginx:1.28", do: func(ctx context.Context) error {
			return undo(ctx, deploys, caches)
		}, until: rolledOut(caches, 10, "nginx:1.28"), hold: 2 * time.Second},
		deleteChapter(env, deploys, caches),
	}
	for i, ch := range chapters {
		p.chapter(i+1, len(chapters), ch.title)
		if err := ch.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", ch.title, err)
		}
		if err := waitUntil(ctx, ch.until); err != nil {
			return fmt.Errorf("%s: %w", ch.title, err)
		}
		p.done()
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
func deleteChapter(env *demoEnv, deploys *listwatch.Resource[*object.Deployment], caches *demoCaches) chapter {
	ch := chapter{title: "delete Deployment " + demoDeployment + "; ReplicaSets and pods follow", until: gone(caches), hold: time.Second,
		do: func(ctx context.Context) error {
			return deploys.Delete(ctx, demoDeployment, listwatch.DeleteOptions{PropagationPolicy: "Background"})
		}}
	if !env.collects {
		ch.title = "delete Deployment " + demoDeployment + " (no garbage collector here)"
		ch.until = func() (bool, string) {
			_, exists := caches.deployment()
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
func undo(ctx context.Context, deploys *listwatch.Resource[*object.Deployment], caches *demoCaches) error {
	d, ok := caches.deployment()
	if !ok {
		return errors.New("no Deployment to roll back")
	}
	current := revisionOf(&d.ObjectMeta)
	var prev *object.ReplicaSet
	for _, rs := range caches.owned(d) {
		if revisionOf(&rs.ObjectMeta) == current-1 {
			prev = rs
		}
	}
	if prev == nil {
		return fmt.Errorf("no ReplicaSet of revision %d", current-1)
	}
	t := object.DeepCopy(prev.Spec.Template)
	labels := maps.Clone(t.Labels)
	delete(labels, "pod-template-hash")
	t.Labels = labels
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
	if !errors.Is(err, object.ErrProtobufMembers) {
		if err != nil {
			return err
		}
		_, err = deploys.Patch(ctx, demoDeployment, listwatch.MergePatch, body, "")
		return err
	}
	// The template was read in protobuf, which a JSON patch cannot carry: the
	// Deployment is written whole, in protobuf, at the version just read.
	for attempt := 0; ; attempt++ {
		cur, err := deploys.Get(ctx, demoDeployment)
		if err != nil {
			return err
		}
		cur.Spec.Template = t
		if _, err = deploys.Update(ctx, cur); err == nil || !object.IsConflict(err) || attempt == 2 {
			return err
		}
	}
}

// The conditions the chapters wait for, read from the caches: each says whether it holds
// and, for a story that times out, what it still waits for.

// rolledOut: the Deployment's controller has seen its spec, and all its replicas run
// image, updated and available.
func rolledOut(caches *demoCaches, replicas int32, image string) func() (bool, string) {
	return func() (bool, string) {
		d, ok := caches.deployment()
		if !ok {
			return false, "the Deployment"
		}
		st := d.Status
		done := st.ObservedGeneration >= d.Generation && imageOf(d.Spec.Template) == image &&
			st.Replicas == replicas && st.UpdatedReplicas == replicas && st.AvailableReplicas == replicas
		return done, fmt.Sprintf("%d updated and available replicas of %s (status %+v)", replicas, image, st)
	}
}

// started: the new ReplicaSet of image exists and has grown, while old pods still run.
func started(caches *demoCaches, image string) func() (bool, string) {
	return func() (bool, string) {
		d, ok := caches.deployment()
		if !ok {
			return false, "the Deployment"
		}
		var newDesired, oldDesired int32
		for _, rs := range caches.owned(d) {
			if imageOf(rs.Spec.Template) == image {
				newDesired = replicasOrZero(rs)
			} else {
				oldDesired += replicasOrZero(rs)
			}
		}
		return newDesired >= 1 && oldDesired >= 1, "the rollout to " + image + " to begin"
	}
}

// pausedCondition: the controller reports the pause in the Progressing condition.
func pausedCondition(caches *demoCaches) func() (bool, string) {
	return func() (bool, string) {
		d, ok := caches.deployment()
		if !ok {
			return false, "the Deployment"
		}
		for _, c := range d.Status.Conditions {
			if c.Type == "Progressing" && c.Reason == "DeploymentPaused" {
				return true, ""
			}
		}
		return false, "the DeploymentPaused condition"
	}
}

// gone: the Deployment, its ReplicaSets and its pods have left the caches.
func gone(caches *demoCaches) func() (bool, string) {
	return func() (bool, string) {
		_, exists := caches.deployment()
		n := caches.dependents()
		return !exists && n == 0, fmt.Sprintf("the Deployment, its ReplicaSets and pods to be gone (%d left)", n)
	}
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
