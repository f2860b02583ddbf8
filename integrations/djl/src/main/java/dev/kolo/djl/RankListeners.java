package dev.kolo.djl;

import ai.djl.Device;
import ai.djl.nn.Parameter;
import ai.djl.training.TrainingConfig;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.MemoryTrainingListener;
import ai.djl.training.listener.SaveModelTrainingListener;
import ai.djl.training.listener.TimeMeasureTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.PairList;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Predicate;

/**
 * Which of a training configuration's listeners run on which rank. Listeners that write files or log
 * progress ({@link SaveModelTrainingListener}, {@link LoggingTrainingListener}, {@link TimeMeasureTrainingListener},
 * {@link MemoryTrainingListener}, and any wrapped by {@link KoloTrainer#onRankZero}) run on rank 0 only: the
 * ranks hold the same model, so one copy of each file and one log is what a user wants. All others (the epoch
 * counter, the evaluators' accumulators, the divergence check, early stopping) run on every rank, so that every
 * rank's {@code getTrainingResult()} is complete and every rank decides alike.
 */
final class RankListeners implements TrainingConfig {
    private final TrainingConfig config;
    private final List<TrainingListener> listeners;

    private RankListeners(TrainingConfig config, List<TrainingListener> listeners) {
        this.config = config;
        this.listeners = listeners;
    }

    /**
     * @return {@code config} with the listeners that run on {@code rank} (rank-0 wrappers unwrapped), after Kolo's
     *     own listeners {@code kolosOwn}
     */
    static TrainingConfig forRank(TrainingConfig config, int rank, TrainingListener... kolosOwn) {
        List<TrainingListener> kept = new ArrayList<>(List.of(kolosOwn));
        for (TrainingListener l : config.getTrainingListeners()) {
            if (l instanceof RankZeroListener wrapped) {
                if (rank == 0) {
                    kept.add(wrapped.listener());
                }
            } else if (rank == 0 || !writes(l)) {
                kept.add(l);
            }
        }
        return new RankListeners(config, List.copyOf(kept));
    }

    /** DJL's listeners that write files or log lines. */
    static boolean writes(TrainingListener l) {
        return l instanceof SaveModelTrainingListener || l instanceof LoggingTrainingListener
                || l instanceof TimeMeasureTrainingListener || l instanceof MemoryTrainingListener;
    }

    @Override
    public Device[] getDevices() {
        return config.getDevices();
    }

    @Override
    public PairList<Initializer, Predicate<Parameter>> getInitializers() {
        return config.getInitializers();
    }

    @Override
    public Optimizer getOptimizer() {
        return config.getOptimizer();
    }

    @Override
    public Loss getLossFunction() {
        return config.getLossFunction();
    }

    @Override
    public ExecutorService getExecutorService() {
        return config.getExecutorService();
    }

    @Override
    public List<Evaluator> getEvaluators() {
        return config.getEvaluators();
    }

    @Override
    public List<TrainingListener> getTrainingListeners() {
        return listeners;
    }
}
