package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;

/** Reads of the fast tier's StatefulSet the tests share. */
final class FastTierPodsView {

    private FastTierPodsView() {
    }

    static String image(StatefulSet sts) {
        return sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "mongod".equals(c.getName())).findFirst().orElseThrow().getImage();
    }
}
