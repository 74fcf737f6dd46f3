// Streams and events: work issued to a stream runs in order (a memset, a kernel, a copy back), an event recorded
// after it is complete once the stream is synchronized, and the time between two events is not negative.
#include <cstdio>

__global__ void add_index(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += i;
}

int main() {
    const int n = 1000;
    int *d, *h;
    cudaMalloc(&d, n * sizeof(int));
    cudaMallocHost(&h, n * sizeof(int));
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, stream);
    cudaMemsetAsync(d, 0, n * sizeof(int), stream);
    add_index<<<(n + 127) / 128, 128, 0, stream>>>(d, n);
    add_index<<<(n + 127) / 128, 128, 0, stream>>>(d, n);
    cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaEventRecord(stop, stream);
    cudaStreamSynchronize(stream);
    float ms = -1;
    cudaError_t timed = cudaEventElapsedTime(&ms, start, stop);
    long sum = 0;
    for (int i = 0; i < n; ++i) sum += h[i];
    printf("sum: %ld (expected %ld)\n", sum, 2L * n * (n - 1) / 2);
    printf("stop complete: %s, elapsed: %s, not negative: %d\n", cudaGetErrorName(cudaEventQuery(stop)),
           cudaGetErrorName(timed), ms >= 0);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    printf("stream destroyed: %s\n", cudaGetErrorName(cudaStreamDestroy(stream)));
    cudaFreeHost(h);
    cudaFree(d);
    return 0;
}
