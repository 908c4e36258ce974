import { describe, expect, it } from 'vitest';
import { parseSeeds } from '../src/seeds.js';

describe('parseSeeds', () => {
  it.each([
    ['0-19', [...Array(20).keys()]],
    ['3', [3]],
    ['1,5,9', [1, 5, 9]],
    ['0-2,10-11', [0, 1, 2, 10, 11]],
    [' 4 - 6 ', [4, 5, 6]],
  ])('%s', (text, seeds) => {
    expect(parseSeeds(text)).toEqual(seeds);
  });

  it.each([
    ['5-1', '--seeds "5-1": the range 5-1 goes down; write 1-5'],
    ['', '--seeds "": expected seeds such as 0-19 or 1,5,9'],
    ['a', '--seeds "a": "a" is not a seed or a range'],
    ['-3', '--seeds "-3": "-3" is not a seed or a range'],
    ['1.5', '"1.5" is not a seed or a range'],
    ['1,1', 'seed 1 is listed twice'],
    ['0-200000', 'has more than 100000 seeds'],
  ])('%s is rejected', (text, message) => {
    expect(() => parseSeeds(text)).toThrow(message);
  });
});
