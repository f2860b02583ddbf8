/*
 * OpenMPI's MPI_Allreduce timed the way `worker.jar bench allreduce` times Kolo's: float32 SUM, sizes in bytes,
 * each op timed alone after a barrier, the slowest rank's time of each op, the median over the ops; untimed ops
 * first. One JSON object per size on rank 0, with the fields of Kolo's lines. The result of every timed op is
 * checked: each element must equal the sum over the ranks of what they put in.
 *
 *   mpicc -O2 -o allreduce allreduce.c && mpirun -np 2 ./allreduce --sizes 4,4096 --budget 1 --impl openmpi-shm
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Untimed ops, then up to `max_ops` ops each after a barrier, as many as fit in `budget` seconds by a probe;
 * fills `slowest` with each op's time on the slowest rank and returns how many there were (every rank alike). */
static int time_ops(float *in, float *out, int n, double budget, double *mine, double *slowest, int max_ops) {
    for (int i = 0; i < 20; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double probe = MPI_Wtime() - t0, slowest_probe;
    MPI_Allreduce(&probe, &slowest_probe, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ops = (int) (budget / (slowest_probe > 1e-7 ? slowest_probe : 1e-7));
    ops = ops < 5 ? 5 : ops > max_ops ? max_ops : ops;
    for (int i = 0; i < ops; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        mine[i] = MPI_Wtime() - start;
    }
    MPI_Allreduce(mine, slowest, ops, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return ops;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *sizes = "4,4096,65536,1048576", *impl = "openmpi";
    double budget = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sizes") == 0) sizes = argv[i + 1];
        else if (strcmp(argv[i], "--budget") == 0) budget = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--impl") == 0) impl = argv[i + 1];
        else {
            if (rank == 0) fprintf(stderr, "unknown option %s (--sizes B,B,... --budget SECONDS --impl NAME)\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    enum { MAX_OPS = 100000 };
    double *mine = malloc(sizeof(double) * MAX_OPS), *slowest = malloc(sizeof(double) * MAX_OPS);
    int failed = 0;
    char *list = strdup(sizes);
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
        long bytes = atol(item);
        int n = (int) (bytes / 4 > 0 ? bytes / 4 : 1);
        float *in = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * n);
        for (int i = 0; i < n; i++) in[i] = (float) (rank + 1 + i % 7); /* small integers: the sum is exact */
        int ops = time_ops(in, out, n, budget, mine, slowest, MAX_OPS);
        for (int i = 0; i < n; i++) {
            float expected = (float) (size * (size + 1) / 2 + size * (i % 7));
            if (out[i] != expected) failed = 1;
        }
        qsort(slowest, ops, sizeof(double), compare);
        double seconds = slowest[ops / 2];
        double algbw = bytes / seconds / 1e9;
        if (rank == 0) {
            printf("{\"bench\":\"allreduce\",\"impl\":\"%s\",\"dtype\":\"float32\",\"np\":%d,\"bytes\":%ld,"
                   "\"time_us\":%.2f,\"algbw_GBps\":%.3f,\"busbw_GBps\":%.3f,\"ops\":%d}\n",
                   impl, size, bytes, seconds * 1e6, algbw, algbw * 2.0 * (size - 1) / size, ops);
            fflush(stdout);
        }
        free(in);
        free(out);
    }
    int any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed && rank == 0) fprintf(stderr, "allreduce: a result differed from the expected sum\n");
    MPI_Finalize();
    return any_failed;
}
