package dev.kolo.djl;

import ai.djl.training.Trainer;
import ai.djl.training.listener.TrainingListener;

/**
 * A listener marked to run on rank 0 only ({@link KoloTrainer#onRankZero}); {@link KoloTrainer} unwraps it on
 * rank 0 and drops it elsewhere. In a plain DJL trainer it simply forwards every call.
 */
final class RankZeroListener implements TrainingListener {
    private final TrainingListener listener;

    RankZeroListener(TrainingListener listener) {
        this.listener = java.util.Objects.requireNonNull(listener, "listener");
    }

    TrainingListener listener() {
        return listener;
    }

    @Override
    public void onEpoch(Trainer trainer) {
        listener.onEpoch(trainer);
    }

    @Override
    public void onTrainingBatch(Trainer trainer, BatchData batchData) {
        listener.onTrainingBatch(trainer, batchData);
    }

    @Override
    public void onValidationBatch(Trainer trainer, BatchData batchData) {
        listener.onValidationBatch(trainer, batchData);
    }

    @Override
    public void onTrainingBegin(Trainer trainer) {
        listener.onTrainingBegin(trainer);
    }

    @Override
    public void onTrainingEnd(Trainer trainer) {
        listener.onTrainingEnd(trainer);
    }
}
